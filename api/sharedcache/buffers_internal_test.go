package sharedcache

import (
	"strings"
	"testing"

	"platformapi/api/sharedcache/redistest"
)

// Each Redis connection holds 4 KiB buffers, not go-redis's 32 KiB, and a
// reply larger than them still reads whole.
func TestNew_SmallConnectionBuffers_LargeReplyReadsWhole(t *testing.T) {
	s, err := New(Options{URL: redistest.Start(t).URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.client.Close() })
	if o := s.client.Options(); o.ReadBufferSize != connBuffer || o.WriteBufferSize != connBuffer {
		t.Fatalf("buffers = %d/%d, want %d", o.ReadBufferSize, o.WriteBufferSize, connBuffer)
	}
	big := strings.Repeat("x", 10*connBuffer)
	if err := s.client.Set(t.Context(), "platformapi-test-big", big, 0).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := s.client.Get(t.Context(), "platformapi-test-big").Result()
	if err != nil || got != big {
		t.Fatalf("GET of a %d-byte value: %d bytes, %v", len(big), len(got), err)
	}
}
