package fake

// CacheRuleNames returns the names of the cachedContents routes' rules,
// for the tests of package fake_test.
func CacheRuleNames() []string {
	names := make([]string, len(cacheRules))
	for i, r := range cacheRules {
		names[i] = r.name
	}
	return names
}
