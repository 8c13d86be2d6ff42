package lapack

// #include "lapack.h"
import "C"

import (
	"math"
	"unsafe"

	// The link directive for libopenblas lives in native.
	_ "github.com/kdual/kdual/native"
)

// one is the length of every Fortran CHARACTER*1 argument.
const one = C.size_t(1)

func dptr(s []float64) *C.double {
	if len(s) == 0 {
		return nil
	}
	return (*C.double)(unsafe.Pointer(&s[0]))
}

func iptr(s []int32) *C.int {
	if len(s) == 0 {
		return nil
	}
	return (*C.int)(unsafe.Pointer(&s[0]))
}

func cint(v int) C.int {
	if v > math.MaxInt32 || v < math.MinInt32 {
		panic("lapack: dimension overflows the 32-bit LAPACK integer")
	}
	return C.int(v)
}

func cchar(b byte) C.char { return C.char(b) }

// lworkFrom turns a workspace-query result into a length.
func lworkFrom(w float64) int {
	n := int(math.Ceil(w))
	if n < 1 {
		n = 1
	}
	return n
}
