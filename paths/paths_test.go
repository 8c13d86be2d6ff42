package paths

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdual/kdual/native"
	"github.com/kdual/kdual/status"
)

var (
	noAVX2   = native.CPUFeatures{Vendor: "intel"}
	haswell  = native.CPUFeatures{Vendor: "intel", AVX2: true}
	skylakeX = native.CPUFeatures{Vendor: "intel", AVX2: true, AVX512F: true, AVX512VL: true, AVX512BW: true, AVX512DQ: true, VNNI: true}
	sapphire = native.CPUFeatures{Vendor: "intel", AVX2: true, AVX512F: true, AVX512VL: true, AVX512BW: true, AVX512DQ: true, AVX512BF16: true, VNNI: true}
	zen3     = native.CPUFeatures{Vendor: "amd", AVX2: true}
	zen4     = native.CPUFeatures{Vendor: "amd", AVX2: true, AVX512F: true, AVX512VL: true, AVX512BW: true, AVX512DQ: true, AVX512BF16: true, VNNI: true}
)

// The core that matches a processor, by its features alone.
func TestWantCore(t *testing.T) {
	for _, c := range []struct {
		cpu  native.CPUFeatures
		want string
	}{{noAVX2, ""}, {haswell, "Haswell"}, {skylakeX, "SkylakeX"}, {sapphire, "Cooperlake"}, {zen3, "Zen"}, {zen4, "Cooperlake"},
		{native.CPUFeatures{Vendor: "other", AVX2: true}, "Haswell"}} {
		require.Equal(t, c.want, WantCore(c.cpu), "%+v", c.cpu)
	}
}

// The core check as a function of (features, chosen core, environment):
// a restart only for a generic core, on a processor with AVX2, when the
// user did not choose the core.
func TestCheckCore(t *testing.T) {
	for _, c := range []struct {
		cpu     native.CPUFeatures
		core    string
		byUser  bool
		generic bool
		want    string
		restart bool
	}{
		{sapphire, "Prescott", false, true, "Cooperlake", true},
		{skylakeX, "Nehalem", false, true, "SkylakeX", true},
		{haswell, "Core2", false, true, "Haswell", true},
		{zen3, "Barcelona", false, true, "Zen", true},
		{zen3, "barcelona", false, true, "Zen", true}, // case does not matter
		{sapphire, "Prescott", true, true, "Cooperlake", false},
		{noAVX2, "Prescott", false, true, "", false},
		{sapphire, "Cooperlake", false, false, "", false},
		{sapphire, "SkylakeX", false, false, "", false},
		{zen4, "Zen", false, false, "", false},
		{haswell, "Haswell", true, false, "", false},
	} {
		got := CheckCore(Facts{CPU: c.cpu, Core: c.core, CoreSetByUser: c.byUser})
		require.Equal(t, c.generic, got.Generic, "%+v", c)
		require.Equal(t, c.want, got.Want, "%+v", c)
		require.Equal(t, c.restart, got.Restart, "%+v", c)
		require.Equal(t, c.core, got.Core)
		require.NotEmpty(t, got.Why)
		if c.restart {
			require.Contains(t, got.Why, "OPENBLAS_CORETYPE="+c.want)
		}
	}
}

// The rules on stated facts: portable paths without the features, the
// fast ones with them, never a path the processor cannot run, and one
// reason per path.
func TestRules(t *testing.T) {
	for _, cpu := range []native.CPUFeatures{noAVX2, haswell, skylakeX, sapphire, zen3, zen4} {
		f := Facts{CPU: cpu, Core: WantCore(cpu), THP: "madvise", ReportingOrder: -1}
		p := Rules(f)
		require.NoError(t, p.Check(f), "%+v", cpu)
		require.Equal(t, "rules", p.Source)
		require.Equal(t, cpu.AVX512F, p.InnerNative, "%+v", cpu)
		require.Equal(t, cpu.VNNI, p.Int8, "%+v", cpu)
		require.Equal(t, cpu.AVX2, p.SingleBlocks, "%+v", cpu)
		require.Equal(t, cpu.AVX512VL && cpu.AVX512DQ, p.WideSymm)
		require.Equal(t, p.WideSymm, p.WideSingle)
		require.Equal(t, p.WideSymm, p.SyrkNative, "the packed kernel where AVX-512 F, VL and DQ, whatever OpenBLAS's core")
		require.Equal(t, syrkWhy(p.WideSymm), p.Reasons[slices.Index(Known, "syrk")].Why)
		require.Equal(t, p.WideSymm, p.GemmNative, "the packed products where AVX-512 F, VL and DQ, whatever OpenBLAS's core")
		require.Equal(t, gemmWhy(p.WideSymm), p.Reasons[slices.Index(Known, "gemm")].Why)
		require.False(t, p.WideSymv)
		require.False(t, p.HugePages)
		require.True(t, p.MapNative && p.Grid && p.SymmNative)
		require.Len(t, p.Reasons, len(Known))
		names := map[string]bool{}
		for _, r := range p.Reasons {
			require.NotEmpty(t, r.Why)
			require.NotEmpty(t, r.Choice)
			names[r.Path] = true
		}
		require.Len(t, names, len(Known))
		for i, path := range Known {
			c, ok := p.Choice(path)
			require.True(t, ok)
			require.Equal(t, Reason{path, c, p.Reasons[i].Why}, p.Reasons[i], "the rules' reasons follow the values")
		}
		g := Rules(Facts{CPU: cpu, Core: "Prescott"})
		require.Len(t, g.Reasons, len(Known)+btoi(cpu.AVX2), "a generic core adds its reason where a better one exists")
	}
	require.Contains(t, hugeWhy(Facts{THP: "madvise", ReportingOrder: 9}), "free page reporting")
	require.Contains(t, hugeWhy(Facts{THP: "never"}), "never")
	require.Contains(t, hugeWhy(Facts{THP: "always"}), "always")
	// A machine that reports no free pages has the order −1, and the huge
	// pages rule then does not name free page reporting; the other facts
	// are Detect's.
	none := detect(func() (int, bool) { return 0, false })
	require.Equal(t, -1, none.ReportingOrder)
	require.NotContains(t, hugeWhy(Facts{THP: "madvise", ReportingOrder: none.ReportingOrder}), "free page reporting")
	require.Equal(t, 9, detect(func() (int, bool) { return 9, true }).ReportingOrder)
	here := Detect()
	none.ReportingOrder = here.ReportingOrder
	require.Equal(t, here, none)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Check refuses what the processor lacks, naming the field.
func TestCheck(t *testing.T) {
	f := Facts{CPU: haswell}
	for _, p := range []Paths{{InnerNative: true}, {Int8: true}, {SyrkNative: true}, {GemmNative: true}, {WideSymm: true}, {WideSingle: true}, {WideSymv: true}} {
		err := p.Check(f)
		require.ErrorIs(t, err, status.ErrInvalid, "%+v", p)
	}
	require.NoError(t, Paths{MapNative: true, Grid: true, SymmNative: true, SingleBlocks: true, HugePages: true}.Check(f))
}

// Override sets each key both ways and refuses unknown keys and values.
func TestOverride(t *testing.T) {
	p := Paths{Source: "rules"}
	require.NoError(t, p.Override("inner=native,map=native,symm=native,syrk=native,gemm=native,single=on,grid=on,int8=on,avx512=on,hugepages=on"))
	reasons := p.Reasons
	p.Reasons = nil
	require.Equal(t, Paths{InnerNative: true, MapNative: true, SymmNative: true, SyrkNative: true, GemmNative: true, SingleBlocks: true, Grid: true, Int8: true,
		WideSymm: true, WideSingle: true, WideSymv: true, HugePages: true,
		Source: "rules + inner=native,map=native,symm=native,syrk=native,gemm=native,single=on,grid=on,int8=on,avx512=on,hugepages=on"}, p)
	require.Len(t, reasons, len(Known))
	for i, r := range reasons {
		c, _ := p.Choice(Known[i])
		require.Equal(t, Reason{Known[i], c, `set by the override "inner=native,map=native,symm=native,syrk=native,gemm=native,single=on,grid=on,int8=on,avx512=on,hugepages=on"`}, r)
	}
	require.NoError(t, p.Override("inner=blas, map=go ,symm=blas,syrk=blas,gemm=blas,single=off,grid=off,int8=off,avx512=off,hugepages=off"))
	p.Source, p.Reasons = "", nil
	require.Equal(t, Paths{}, p)

	// The rules' reasons stay where the override keeps their choice.
	r := Rules(Facts{CPU: zen4})
	require.NoError(t, r.Override("int8=off,grid=on"))
	rules := Rules(Facts{CPU: zen4})
	for i, why := range r.Reasons {
		if why.Path == "int8" {
			require.Equal(t, Reason{"int8", "off", `set by the override "int8=off,grid=on"`}, why)
		} else {
			require.Equal(t, rules.Reasons[i], why, why.Path)
		}
	}
	require.NoError(t, p.Override(""))
	for _, bad := range []string{"inner", "inner=fast", "speed=on", "avx512=maybe"} {
		require.ErrorIs(t, p.Override(bad), status.ErrInvalid, bad)
	}
}

// A profile round-trips bit for bit; other versions, unknown fields and
// garbage are refused.
func TestSaveLoad(t *testing.T) {
	p := Rules(Facts{CPU: sapphire, Core: "Prescott", THP: "madvise", ReportingOrder: -1})
	var buf bytes.Buffer
	require.NoError(t, p.Save(&buf))
	q, err := Load(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.Equal(t, p, q)

	// Values changed after the reasons were recorded (a profile edited by
	// hand): the values stand, and the reasons follow them and say so.
	edited := p
	edited.Reasons = append([]Reason(nil), p.Reasons...)
	edited.HugePages, edited.Int8, edited.WideSymv = true, false, true
	buf.Reset()
	require.NoError(t, edited.Save(&buf))
	q, err = Load(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.Equal(t, [3]bool{true, false, true}, [3]bool{q.HugePages, q.Int8, q.WideSymv})
	require.Len(t, q.Reasons, len(p.Reasons))
	for i, r := range q.Reasons {
		was := p.Reasons[i]
		require.Equal(t, was.Path, r.Path)
		c, known := q.Choice(r.Path)
		if !known {
			require.Equal(t, was, r, "a reason of no known path is kept")
			continue
		}
		require.Equal(t, c, r.Choice, r.Path)
		if r.Choice == was.Choice {
			require.Equal(t, was, r)
		} else {
			require.Contains(t, r.Why, "set in the profile", r.Path)
			require.Contains(t, r.Why, was.Why, r.Path)
		}
	}
	byPath := map[string]Reason{}
	for _, r := range q.Reasons {
		byPath[r.Path] = r
	}
	require.Equal(t, "on", byPath["huge pages"].Choice)
	require.Equal(t, "off", byPath["int8"].Choice)
	require.Equal(t, "float64 blocks, float32 blocks, one vector", byPath["avx512"].Choice)

	// A profile tuned before the choices were read off the values wrote
	// avx512's its own way: the same values keep their measured reason.
	old := `{"version": 1, "paths": {"avx512_float64_blocks": true, "avx512_float32_blocks": true, "reasons": [` +
		`{"path": "avx512", "choice": "float64 blocks true, float32 blocks true, one vector false", "why": "measured 1 ms against 2 ms"}]}}`
	q, err = Load(bytes.NewReader([]byte(old)))
	require.NoError(t, err)
	require.Equal(t, Reason{"avx512", "float64 blocks, float32 blocks", "measured 1 ms against 2 ms"}, q.Reasons[slices.Index(Known, "avx512")])
	stale := strings.Replace(old, "one vector false", "one vector true", 1)
	q, err = Load(bytes.NewReader([]byte(stale)))
	require.NoError(t, err)
	require.Contains(t, q.Reasons[slices.Index(Known, "avx512")].Why, "set in the profile")

	// A profile without reasons gets one for every known path.
	q, err = Load(bytes.NewReader([]byte(`{"version": 1, "paths": {"grid": true, "symm_native": true}}`)))
	require.NoError(t, err)
	require.Len(t, q.Reasons, len(Known))
	for i, r := range q.Reasons {
		c, _ := q.Choice(Known[i])
		require.Equal(t, Reason{Known[i], c, "set in the profile, which records no reason"}, r)
	}
	choice := func(path string) string { return q.Reasons[slices.Index(Known, path)].Choice }
	require.Equal(t, "on", choice("grid"))
	require.Equal(t, "off", choice("int8"))
	require.Equal(t, "native", choice("symm"))
	require.Equal(t, "blas", choice("syrk"), "a profile written before the packed kernel keeps ssyrk")
	require.Equal(t, "blas", choice("gemm"), "a profile written before the packed products keeps sgemm")
	require.Equal(t, "none", choice("avx512"))
	_, known := q.Choice("turbo")
	require.False(t, known)
	for _, bad := range []string{`{"version": 2, "paths": {}}`, `{"version": 1, "paths": {"turbo": true}}`, `not json`, ``} {
		_, err := Load(bytes.NewReader([]byte(bad)))
		require.ErrorIs(t, err, status.ErrInvalid, bad)
	}
}

// Current is the rules until Set, Set refuses what this processor cannot
// run and leaves the value as it was, Reset brings the rules back.
func TestCurrentSetReset(t *testing.T) {
	defer Reset()
	rules := Rules(Detect())
	require.Equal(t, rules, Current())
	p := rules
	p.Grid = !p.Grid
	p.Source = "test"
	require.NoError(t, Set(p))
	require.Equal(t, p, Current())
	if !Detect().CPU.AVX512F {
		require.Error(t, Set(Paths{InnerNative: true}))
		require.Equal(t, p, Current())
	}
	Reset()
	require.Equal(t, rules, Current())
	require.Equal(t, Current().Build(), native.Best(), "native's default build is the rules' build")
}
