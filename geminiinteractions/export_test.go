package geminiinteractions

// Checked returns how many remembered interactions the requests of m
// were checked against so far: the steps a request takes to know which
// history the server holds.
func Checked(m *Models) int64 {
	m.chains.mu.Lock()
	defer m.chains.mu.Unlock()
	return m.chains.checked
}
