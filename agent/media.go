package agent

import (
	"slices"

	"github.com/toolnexus/toolnexus-go/geminiadapter"
)

// mediaFor returns results as a model can take them in function
// responses: unchanged for a model that receives media from tools
// (inResponses: Gemini 3 and later, see geminiadapter.MediaInResponses),
// else with every result's media replaced by a short description
// (geminiadapter.DescribeMedia), since older models answer media parts with
// a 400. results is not modified: Turn.Results keep the media.
func mediaFor(inResponses bool, results []ToolResult) []ToolResult {
	if inResponses {
		return results
	}
	var out []ToolResult
	for i := range results {
		if len(results[i].Media) == 0 {
			continue
		}
		if out == nil {
			out = slices.Clone(results)
		}
		out[i].Result = geminiadapter.DescribeMedia(results[i].Result)
	}
	if out == nil {
		return results
	}
	return out
}
