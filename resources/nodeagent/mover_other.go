//go:build !linux

package nodeagent

import "os"

// mover copies a file span by span through a buffer.
type mover struct {
	src, dst *os.File
	buf      *[]byte // the read/write buffer, taken when first needed
}

func newMover(src, dst *os.File) *mover { return &mover{src: src, dst: dst} }

// move copies up to n bytes at off and answers how many; io.EOF at the
// end of src.
func (m *mover) move(off int64, n int, name string) (int, error) { return m.readWrite(off, n, name) }
