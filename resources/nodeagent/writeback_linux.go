package nodeagent

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing n bytes of f from off to
// the disk now (sync_file_range, SYNC_FILE_RANGE_WRITE, no waiting), so
// the disk works while the copy goes on and the fsync at the end of the
// file has little left to wait for. A failure only loses that head start.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
