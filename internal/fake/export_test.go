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

// EmbedRules returns the names of embedRules and what backs each.
func EmbedRules() [][2]string {
	var out [][2]string
	for _, r := range embedRules {
		out = append(out, [2]string{r.name, r.verified + r.assumed})
	}
	return out
}
