package openapitools

// PatchV2 is patchV2, for the tests that check requests against a
// description with kin-openapi's own validator: they read the description
// as the package does.
var PatchV2 = patchV2
