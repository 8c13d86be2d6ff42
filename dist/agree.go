//go:build mpi

package dist

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/kdual/kdual/mpi"
	"github.com/kdual/kdual/status"
)

// Field is one thing every rank of a job must agree on: a name for the
// message and its value on this rank.
type Field struct {
	Name, Value string
}

// Agree checks, before any work, that every rank holds the same value of
// each field (the command, the flags that shape the computation, the
// data's size and checksum, the version): each value is hashed (FNV-1a,
// 52 bits, exact in a float64) and the hashes' maximum and minimum over
// the ranks compared, in one MPI_Allreduce. It returns an error wrapping
// status.ErrInvalid that names the first field, in the order given, on
// which the ranks differ, with this rank's value; every rank finds the
// same field.
func Agree(fields []Field) error {
	k := len(fields)
	if k == 0 {
		return nil
	}
	v := make([]float64, 2*k)
	for i, f := range fields {
		h := fnv.New64a()
		h.Write([]byte(f.Value))
		x := float64(h.Sum64() & (1<<52 - 1))
		v[i], v[k+i] = x, -x
	}
	if err := mpi.AllreduceMax(v); err != nil {
		return err
	}
	for i, f := range fields {
		if v[i] != -v[k+i] {
			return fmt.Errorf("dist: the ranks disagree on %s (this rank: %s): every rank must run the same command on the same data: %w",
				f.Name, f.Value, status.ErrInvalid)
		}
	}
	return nil
}

// Checksum is a digest of x's size and every bit of its entries (FNV-1a),
// for Agree.
func Checksum(x *mat.Dense) string {
	r, c := x.Dims()
	h := fnv.New64a()
	var b [8]byte
	raw := x.RawMatrix()
	for i := 0; i < r; i++ {
		for _, e := range raw.Data[i*raw.Stride : i*raw.Stride+c] {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(e))
			h.Write(b[:])
		}
	}
	return fmt.Sprintf("%d×%d %016x", r, c, h.Sum64())
}

// AgreeOnData is Agree on the job's fields (names and values, in order)
// with the data's size and checksum inserted after the first two (the
// command and the version): a different input changes what is derived
// from it (a median σ, say), and the input is then the difference to name.
func AgreeOnData(x *mat.Dense, fields ...[2]string) error {
	data := Field{Name: "the data (size and checksum)", Value: Checksum(x)}
	var fs []Field
	for i, f := range fields {
		if i == 2 {
			fs = append(fs, data)
		}
		fs = append(fs, Field{Name: f[0], Value: f[1]})
	}
	if len(fields) <= 2 {
		fs = append(fs, data)
	}
	return Agree(fs)
}
