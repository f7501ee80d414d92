package locks

// ProcessPids returns the pids of l's client processes that have not
// been reaped, for the tests that check none is left behind.
func ProcessPids(l *ProcessLock) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var pids []int
	for p := range l.all {
		pids = append(pids, p.cmd.Process.Pid)
	}
	return pids
}
