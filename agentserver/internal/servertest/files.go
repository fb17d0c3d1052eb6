package servertest

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"

	"github.com/toolnexus/toolnexus-go/agent"
	"github.com/toolnexus/toolnexus-go/agentserver"
	"github.com/toolnexus/toolnexus-go/artifact"
	"github.com/toolnexus/toolnexus-go/toolset"
)

// ChartCSV is the table the make_chart tool charts.
const ChartCSV = "city,temperature\nParis,21\nTokyo,26\nOslo,12\n"

// ChartPNG draws a bar chart of ChartCSV: a real PNG, 240x160.
func ChartPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 240, 160))
	for y := range 160 {
		for x := range 240 {
			img.Set(x, y, color.White)
		}
	}
	for i, v := range []int{21, 26, 12} {
		for y := 150 - v*5; y < 150; y++ {
			for x := 30 + i*70; x < 80+i*70; x++ {
				img.Set(x, y, color.RGBA{R: uint8(60 * i), G: 120, B: 200, A: 255})
			}
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// Charts adds the make_chart tool to the agent: it makes chart.png (a
// bar chart) and data.csv (its table) and returns them as media, which
// a server with Config.Artifacts keeps as files of the thread. Scripted
// calls it for a question that asks for a chart.
func Charts(c *agent.Config) {
	chart := toolset.MustFunc("make_chart", "Charts the temperatures of the cities.",
		func(ctx context.Context, in struct{}) (toolset.MediaOutput, error) {
			return toolset.MediaOutput{Output: "a bar chart of 3 cities", Media: []toolset.Media{
				{MIMEType: "image/png", Data: ChartPNG(), Name: "chart.png"},
				{MIMEType: "text/csv", Data: []byte(ChartCSV), Name: "data.csv"},
			}}, nil
		})
	tools := []*toolset.Tool{chart}
	if c.Tools != nil {
		tools = append(c.Tools.Tools(), chart)
	}
	c.Tools = toolset.MustNew(tools...)
}

// Artifacts keeps the threads' files with keeper (a Memory store when
// nil); Serve mounts the server's ArtifactsHandler at /artifacts/.
func Artifacts(keeper *artifact.Keeper) func(*agentserver.Config) {
	return func(c *agentserver.Config) {
		if keeper == nil {
			keeper = artifact.NewKeeper(artifact.NewMemory(0), artifact.KeeperOptions{})
		}
		c.Artifacts = keeper
	}
}
