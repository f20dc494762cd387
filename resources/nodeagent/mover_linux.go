package nodeagent

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// mover copies a file span by span: with copy_file_range while the two
// files allow it (the bytes never leave the kernel), else through a
// buffer.
type mover struct {
	src, dst *os.File
	kernel   bool    // copy_file_range still to be tried
	buf      *[]byte // the read/write buffer, taken when first needed
}

func newMover(src, dst *os.File) *mover { return &mover{src: src, dst: dst, kernel: true} }

// move copies up to n bytes at off and answers how many; io.EOF at the
// end of src.
func (m *mover) move(off int64, n int, name string) (int, error) {
	if m.kernel {
		roff, woff := off, off
		k, err := unix.CopyFileRange(int(m.src.Fd()), &roff, int(m.dst.Fd()), &woff, n, 0)
		switch {
		case err == nil && k > 0:
			return k, nil
		case err == nil && off > 0:
			return 0, io.EOF
		case err == nil || unsupported(err):
			// Nothing at the start (some file systems answer 0 rather
			// than refuse) or not between these two: read and write.
			m.kernel = false
		default:
			return 0, cacheFailure("copy "+name, err)
		}
	}
	return m.readWrite(off, n, name)
}

// unsupported reports an error of copy_file_range meaning "not between
// these files" rather than a failure.
func unsupported(err error) bool {
	return errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) ||
		errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EPERM)
}
