#!/usr/bin/env bash
# Using the library from a clone, as the README says: a scratch module
# points github.com/kdual/kdual at this checkout with a replace directive,
# builds a program that fits, saves and reloads a KPCA model, and runs it.
# $1: the clone (default: this checkout).
set -euo pipefail
root=$(cd "${1:-$(dirname "$0")/..}" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
cat > main.go <<'GO'
package main

import (
	"bytes"
	"fmt"
	"log"

	"github.com/kdual/kdual/dataset"
	"github.com/kdual/kdual/kernel"
	"github.com/kdual/kdual/models/kpca"
)

func main() {
	iris, err := dataset.Iris()
	if err != nil {
		log.Fatal(err)
	}
	m := &kpca.KPCA{Components: 2, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}}
	if err := m.Fit(iris.X); err != nil {
		log.Fatal(err)
	}
	var file bytes.Buffer
	if err := m.Save(&file); err != nil {
		log.Fatal(err)
	}
	back, err := kpca.Load(&file)
	if err != nil {
		log.Fatal(err)
	}
	a, _ := m.Transform(iris.X)
	b, _ := back.Transform(iris.X)
	fmt.Println("same scores after reload:", a.At(7, 1) == b.At(7, 1))
}
GO
go mod init example.com/try >/dev/null 2>&1
go mod edit -replace "github.com/kdual/kdual=$root" -require github.com/kdual/kdual@v0.0.0
go mod tidy >/dev/null 2>&1 || { go mod tidy; exit 1; }
out=$(go run .)
echo "test-clone-use: $out"
[ "$out" = "same scores after reload: true" ]
