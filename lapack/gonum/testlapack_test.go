package gonum

import (
	"testing"

	"gonum.org/v1/gonum/lapack/testlapack"
)

// gonum's own LAPACK test suite, run against the OpenBLAS implementation:
// one test for each of the 33 methods of lapack.Float64. The helpers these
// tests call beside the method under test (Dgeqr2, Dorg2r, Dlange, …) are
// gonum's, embedded, or the OpenBLAS ones where they are methods too.

var impl = Implementation{}

func TestDgecon(t *testing.T)  { t.Parallel(); testlapack.DgeconTest(t, impl) }
func TestDgeev(t *testing.T)   { t.Parallel(); testlapack.DgeevTest(t, impl) }
func TestDgels(t *testing.T)   { t.Parallel(); testlapack.DgelsTest(t, impl) }
func TestDgelqf(t *testing.T)  { t.Parallel(); testlapack.DgelqfTest(t, impl) }
func TestDgeqp3(t *testing.T)  { t.Parallel(); testlapack.Dgeqp3Test(t, impl) }
func TestDgeqrf(t *testing.T)  { t.Parallel(); testlapack.DgeqrfTest(t, impl) }
func TestDgesvd(t *testing.T)  { t.Parallel(); testlapack.DgesvdTest(t, impl, 1e-13) }
func TestDgetrf(t *testing.T)  { t.Parallel(); testlapack.DgetrfTest(t, impl) }
func TestDgetri(t *testing.T)  { t.Parallel(); testlapack.DgetriTest(t, impl) }
func TestDgetrs(t *testing.T)  { t.Parallel(); testlapack.DgetrsTest(t, impl) }
func TestDggsvd3(t *testing.T) { t.Parallel(); testlapack.Dggsvd3Test(t, impl) }
func TestDlange(t *testing.T)  { t.Parallel(); testlapack.DlangeTest(t, impl) }
func TestDlansy(t *testing.T)  { t.Parallel(); testlapack.DlansyTest(t, impl) }
func TestDlantr(t *testing.T)  { t.Parallel(); testlapack.DlantrTest(t, impl) }
func TestDlapmr(t *testing.T)  { t.Parallel(); testlapack.DlapmrTest(t, impl) }
func TestDlapmt(t *testing.T)  { t.Parallel(); testlapack.DlapmtTest(t, impl) }
func TestDorgqr(t *testing.T)  { t.Parallel(); testlapack.DorgqrTest(t, impl) }
func TestDormqr(t *testing.T)  { t.Parallel(); testlapack.DormqrTest(t, impl) }
func TestDorglq(t *testing.T)  { t.Parallel(); testlapack.DorglqTest(t, impl) }
func TestDormlq(t *testing.T)  { t.Parallel(); testlapack.DormlqTest(t, impl) }
func TestDpbcon(t *testing.T)  { t.Parallel(); testlapack.DpbconTest(t, impl) }
func TestDpbtrf(t *testing.T)  { t.Parallel(); testlapack.DpbtrfTest(t, impl) }
func TestDpbtrs(t *testing.T)  { t.Parallel(); testlapack.DpbtrsTest(t, impl) }
func TestDpocon(t *testing.T)  { t.Parallel(); testlapack.DpoconTest(t, impl) }
func TestDpotrf(t *testing.T)  { t.Parallel(); testlapack.DpotrfTest(t, impl) }
func TestDpotri(t *testing.T)  { t.Parallel(); testlapack.DpotriTest(t, impl) }
func TestDpotrs(t *testing.T)  { t.Parallel(); testlapack.DpotrsTest(t, impl) }
func TestDpstrf(t *testing.T)  { t.Parallel(); testlapack.DpstrfTest(t, impl) }
func TestDsyev(t *testing.T)   { t.Parallel(); testlapack.DsyevTest(t, impl) }
func TestDtbtrs(t *testing.T)  { t.Parallel(); testlapack.DtbtrsTest(t, impl) }
func TestDtrcon(t *testing.T)  { t.Parallel(); testlapack.DtrconTest(t, impl) }
func TestDtrtri(t *testing.T)  { t.Parallel(); testlapack.DtrtriTest(t, impl) }
func TestDtrtrs(t *testing.T)  { t.Parallel(); testlapack.DtrtrsTest(t, impl) }
