//go:build !linux

package main

// syncDisks does nothing off Linux: the bench's loads are measured on Linux.
func syncDisks() {}
