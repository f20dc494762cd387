package resources

import (
	"strings"
	"sync"
	"testing"
)

func TestTokenHasher_SameAsPepperHash_ConcurrentAndLong(t *testing.T) {
	p := Pepper("pepper-one-0123456789")
	h := NewTokenHasher(p)
	values := []string{"", "x", NewTokenValue(TokenKindPersonal), strings.Repeat("y", 64),
		strings.Repeat("z", 65), strings.Repeat("é", 200)}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				for _, v := range values {
					if got, want := string(h.Hash(v)), string(p.Hash(v)); got != want {
						t.Errorf("%q: hasher %x, pepper %x", v, got, want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	p[0] = 'P' // the hasher keeps the pepper it was given
	if string(h.Hash("x")) != string(Pepper("pepper-one-0123456789").Hash("x")) {
		t.Fatal("the hasher followed a change to the pepper's bytes")
	}
}

func TestIsBase62_ExactlyTheAlphabet(t *testing.T) {
	for c := 0; c < 256; c++ {
		if got, want := isBase62(byte(c)), strings.IndexByte(base62, byte(c)) >= 0; got != want {
			t.Fatalf("%q: %v, want %v", rune(c), got, want)
		}
	}
}
