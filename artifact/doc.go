// Package artifact keeps the files an agent makes and reads (a chart, a
// CSV, a report, a user's PDF) beside the conversation: each save a new
// immutable version, with its content type, size, SHA-256 and time.
//
// A [Store] keeps them per user and per thread (a thread "" holds the
// user's own files, which all their threads reach): [Memory] in the
// process, [Dir] in a directory, sqlitestore and pgstore in the session
// stores' databases, and any cloud object store (S3, GCS, Azure) through
// the module artifact/blobstore. Every store passes the contract of
// package artifacttest: versions, a requested version honoured, every
// change kept, text kept byte for byte, concurrent saves of one name that
// get distinct versions and lose none, saves that are atomic, deletion,
// quotas, hostile names refused.
package artifact
