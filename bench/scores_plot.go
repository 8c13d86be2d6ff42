package bench

import (
	"fmt"
	"image/color"
	"sort"

	"github.com/kdual/kdual/status"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// palette colours up to ten classes (then it repeats, with other glyphs).
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
}

// PlotScores draws the first two columns of scores (n×s, s ≥ 2) as a
// scatter plot, one colour per label when labels (one per row) are given,
// and writes it to path (the format from its extension: .png, .svg, .pdf).
func PlotScores(path string, scores *mat.Dense, labels []string, title string) error {
	n, s := scores.Dims()
	if s < 2 {
		return fmt.Errorf("bench: a scores plot needs two components, have %d: %w", s, status.ErrInvalid)
	}
	if labels != nil && len(labels) != n {
		return fmt.Errorf("bench: %d labels for %d rows: %w", len(labels), n, status.ErrInvalid)
	}
	groups := map[string]plotter.XYs{}
	for i := 0; i < n; i++ {
		l := ""
		if labels != nil {
			l = labels[i]
		}
		groups[l] = append(groups[l], plotter.XY{X: scores.At(i, 0), Y: scores.At(i, 1)})
	}
	names := make([]string, 0, len(groups))
	for l := range groups {
		names = append(names, l)
	}
	sort.Strings(names)
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = "component 1", "component 2"
	glyphs := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.CrossGlyph{}}
	for k, l := range names {
		sc, err := plotter.NewScatter(groups[l])
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color = palette[k%len(palette)]
		sc.GlyphStyle.Shape = glyphs[(k/len(palette))%len(glyphs)]
		sc.GlyphStyle.Radius = 2
		p.Add(sc)
		if l != "" {
			p.Legend.Add(l, sc)
		}
	}
	p.Legend.Top = true
	return p.Save(6*vg.Inch, 5*vg.Inch, path)
}
