package resources

import "testing"

func TestGPUMemoryBytes_VendorFiguresInDecimalGBUnknownClassNone(t *testing.T) {
	for _, tc := range []struct {
		class string
		bytes float64
		known bool
	}{
		{"H100", 80e9, true},
		{"A100", 80e9, true},
		{"L40S", 48e9, true},
		{"l40s", 48e9, true},
		{" H100 ", 80e9, true},
		{"MI300X", 0, false},
		{"H100 NVL", 0, false},
		{"", 0, false},
	} {
		t.Run(tc.class, func(t *testing.T) {
			got, ok := GPUMemoryBytes(tc.class)
			if got != tc.bytes || ok != tc.known {
				t.Fatalf("GPUMemoryBytes(%q) = %v, %v; want %v, %v", tc.class, got, ok, tc.bytes, tc.known)
			}
		})
	}
}
