package resources

import "strings"

// gpuClassMemory is the memory of one GPU of each class the platform knows,
// by the roster's gpu_class label (upper case), in bytes as the vendor's
// data sheet states it: decimal gigabytes, so the H100's "80 GB" is 80e9
// bytes (the chips hold 80 GiB; an exporter reports a little less than
// either, what the driver leaves usable). The catalogue's size_gb is
// decimal gigabytes too, so a model's weights and a GPU's memory compare.
var gpuClassMemory = map[string]float64{
	"A100": 80e9, // NVIDIA A100 80GB (SXM4 and PCIe)
	"H100": 80e9, // NVIDIA H100 80GB (SXM5 and PCIe)
	"L40S": 48e9, // NVIDIA L40S 48GB
}

// GPUMemoryBytes is the memory of one GPU of class, a roster gpu_class
// label compared regardless of case ("h100" is an H100). For a class the
// platform does not know it reports false: that memory, and so the VRAM
// total of a node holding such GPUs, is unknown (null), never a guess.
func GPUMemoryBytes(class string) (bytes float64, ok bool) {
	bytes, ok = gpuClassMemory[strings.ToUpper(strings.TrimSpace(class))]
	return bytes, ok
}
