package mcptools

// Waiting returns the number of callers waiting for c's connection in
// progress, so that a test can tell when they all wait.
func Waiting(c *Client) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dialing == nil {
		return 0
	}
	return c.dialing.waiters
}
