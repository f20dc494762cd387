package nodeagent

import (
	"fmt"
	"os"
	"syscall"
)

// statfs answers the total bytes of the file system holding f and the
// bytes available to the agent's user on it.
func statfs(f *os.File) (total, avail int64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Fstatfs(int(f.Fd()), &st); err != nil {
		return 0, 0, fmt.Errorf("statfs of the cache root: %w", err)
	}
	return int64(st.Blocks) * st.Bsize, int64(st.Bavail) * st.Bsize, nil
}
