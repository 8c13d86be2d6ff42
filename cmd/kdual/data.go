package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/internal/bigmem"
)

func runData(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "augment" {
		return usagef("data: want data augment")
	}
	fs := newFlags("data augment")
	n := fs.Int("n", 0, "images to write: the 70 000 Fashion-MNIST images, then moved copies (shifts, rotations up to 10°, N(0, 2²) noise in levels, rounded to 8 bits)")
	out := fs.String("out", "", "the uncompressed 8-bit IDX file to write (n×28×28; kdual kpca fit --stream reads it)")
	seed := fs.Uint64("seed", 1, "seed of the copies' motions and noise")
	chunk := fs.Int("chunk", 65536, "images made and written at a time (memory: 784 bytes each)")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if *n < 1 || *out == "" || *chunk < 1 {
		return usagef("data augment: --n %d, --out %q, --chunk %d: want n ≥ 1, a file and a chunk ≥ 1", *n, *out, *chunk)
	}
	if err := roomFor(*out, int64(*n)*784+16); err != nil {
		return fmt.Errorf("data augment: --n %d: %w", *n, err)
	}
	start := time.Now()
	a, err := dataset.NewAugment8("", *seed)
	if err != nil {
		return err
	}
	tmp := *out + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // gone once renamed; removed if anything failed
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	if err := dataset.WriteIDX8Header(w, *n, 28, 28); err != nil {
		return err
	}
	buf := make([]uint8, min(*chunk, *n)*784)
	for i0 := 0; i0 < *n; i0 += *chunk {
		if runCtx != nil && runCtx.Err() != nil {
			return fmt.Errorf("data augment: stopped after %d of %d images: %w", i0, *n, runCtx.Err())
		}
		c := min(*chunk, *n-i0)
		a.Fill(i0, buf[:c*784])
		if _, err := w.Write(buf[:c*784]); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, *out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d images of 28×28 bytes (%.2f GB) in %.1f s\n", *out, *n, float64(*n)*784/1e9, time.Since(start).Seconds())
	return nil
}

// roomFor returns an error when the file system that would hold path has
// fewer than bytes free for an unprivileged writer (nil where that cannot
// be read: the writes then report it).
func roomFor(path string, bytes int64) error {
	var st syscall.Statfs_t
	if syscall.Statfs(filepath.Dir(path), &st) != nil {
		return nil
	}
	if free := int64(st.Bavail) * st.Bsize; bytes > free {
		return fmt.Errorf("the file would take %s, and its file system has %s free", bigmem.Size(bytes), bigmem.Size(free))
	}
	return nil
}
