package demotools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"

	"github.com/toolnexus/toolnexus-go/toolset"
)

// The files weather_chart makes.
const (
	ChartName = "weather-chart.png"
	TableName = "weather-chart.csv"
)

type chartInput struct {
	Cities []string `json:"cities" jsonschema:"the cities to chart, e.g. Paris and Tokyo"`
}

// WeatherChart returns weather_chart: a bar chart (a PNG) of the made-up
// temperatures of some cities, with its data (a CSV). It returns them as
// media: a server that keeps files (agentserver.Config.Artifacts) keeps
// them as files of the thread, which a frontend downloads. It is not in
// Set: the web examples add it.
func WeatherChart() *toolset.Tool {
	t := toolset.MustFunc("weather_chart",
		"Draw a bar chart of the current temperatures of some cities (made-up demo data), with a CSV of its data.",
		func(ctx context.Context, in chartInput) (toolset.MediaOutput, error) {
			if len(in.Cities) == 0 || len(in.Cities) > 12 {
				return toolset.MediaOutput{}, errors.New("give 1 to 12 cities")
			}
			var csv strings.Builder
			csv.WriteString("city,temperature_c,condition\n")
			temps := make([]int, len(in.Cities))
			out := map[string]any{}
			for i, city := range in.Cities {
				w, err := makeUpWeather(ctx, weatherInput{City: city})
				if err != nil {
					return toolset.MediaOutput{}, err
				}
				temps[i] = w.Temperature
				out[w.City] = w.Temperature
				fmt.Fprintf(&csv, "%s,%d,%s\n", csvField(w.City), w.Temperature, w.Condition)
			}
			return toolset.MediaOutput{
				Output: map[string]any{"temperatures_c": out, "files": []string{ChartName, TableName}},
				Media: []toolset.Media{
					{MIMEType: "image/png", Data: barChart(temps), Name: ChartName},
					{MIMEType: "text/csv", Data: []byte(csv.String()), Name: TableName},
				},
			}, nil
		})
	t.ReadOnly = true
	return t
}

// csvField quotes a CSV field that needs it.
func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// barChart draws one bar per temperature (-10..40 °C), on a grid, with
// the zero line: a 480x240 PNG.
func barChart(temps []int) []byte {
	const w, h, top, bottom = 480, 240, 10, 230
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	white, grid, axis := color.RGBA{255, 255, 255, 255}, color.RGBA{228, 231, 238, 255}, color.RGBA{120, 126, 140, 255}
	y := func(c int) int { return bottom - (c+10)*(bottom-top)/50 }
	for py := range h {
		for px := range w {
			img.Set(px, py, white)
		}
	}
	for c := -10; c <= 40; c += 10 {
		for px := range w {
			img.Set(px, y(c), grid)
		}
	}
	slot := w / len(temps)
	palette := []color.RGBA{{48, 86, 211, 255}, {46, 158, 107, 255}, {224, 165, 38, 255}, {154, 91, 214, 255}, {208, 68, 58, 255}}
	for i, t := range temps {
		t = max(-10, min(40, t))
		from, to := min(y(0), y(t)), max(y(0), y(t))
		for py := from; py <= to; py++ {
			for px := i*slot + slot/5; px < (i+1)*slot-slot/5; px++ {
				img.Set(px, py, palette[i%len(palette)])
			}
		}
	}
	for px := range w {
		img.Set(px, y(0), axis)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // not reached: an RGBA image encodes
	}
	return b.Bytes()
}
