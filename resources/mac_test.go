package resources

import (
	"strings"
	"sync"
	"testing"
)

func TestMAC_SameAsPepperHash_ConcurrentAndLong(t *testing.T) {
	p := Pepper("pepper-one-0123456789")
	m := NewMAC(p)
	values := []string{"", "x", NewTokenValue(TokenKindPersonal), strings.Repeat("y", 64),
		strings.Repeat("z", 65), strings.Repeat("é", 200)}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				for _, v := range values {
					if got, want := m.Sum(v), p.Hash(v); string(got[:]) != string(want) {
						t.Errorf("%q: MAC %x, pepper %x", v, got, want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	p[0] = 'P' // the MAC keeps the key it was given
	if got := m.Sum("x"); string(got[:]) != string(Pepper("pepper-one-0123456789").Hash("x")) {
		t.Fatal("the MAC followed a change to the key's bytes")
	}
}

func TestIsBase62_ExactlyTheAlphabet(t *testing.T) {
	for c := 0; c < 256; c++ {
		if got, want := isBase62(byte(c)), strings.IndexByte(base62, byte(c)) >= 0; got != want {
			t.Fatalf("%q: %v, want %v", rune(c), got, want)
		}
	}
}
