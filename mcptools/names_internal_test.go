package mcptools

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// geminiRule is Gemini's function name rule (gemini-wire.md §6.6).
var geminiRule = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$`)

func TestGeminiName(t *testing.T) {
	long := strings.Repeat("abcdefghij", 10) // 100 characters
	for _, tc := range []struct {
		prefix, name, want string
	}{
		{"", "get_weather", "get_weather"},
		{"", "ns.tool:v2-beta", "ns.tool:v2-beta"},
		{"gh_", "create_issue", "gh_create_issue"},
		{"", "read file", "read_file"},
		{"", "files/read", "files_read"},
		{"", "météo", "m_t_o"}, // one '_' per character, not per byte
		{"", "天気", "__"},
		{"", "2fa", "_2fa"},
		{"", "-x", "_-x"},
		{"", "", "_"},
		{"my server/", "tool", "my_server_tool"},
		{"1st_", "tool", "_1st_tool"},
		{"", long[:64], long[:64]},
		{"", long, long[:27] + "_da351961_" + long[100-27:]},
	} {
		got := geminiName(tc.prefix, tc.name)
		if got != tc.want {
			t.Errorf("geminiName(%q, %q) = %q, want %q", tc.prefix, tc.name, got, tc.want)
		}
		if !geminiRule.MatchString(got) {
			t.Errorf("geminiName(%q, %q) = %q breaks Gemini's rule", tc.prefix, tc.name, got)
		}
	}
}

// Long names that differ only in the middle stay apart.
func TestGeminiNameLongNamesStayApart(t *testing.T) {
	head, tail := strings.Repeat("h", 40), strings.Repeat("t", 40)
	seen := map[string]string{}
	for _, mid := range []string{"a", "b", "ab", "ba", "_", "é"} {
		name := head + mid + tail
		got := geminiName("", name)
		if len(got) != 64 || !utf8.ValidString(got) || !geminiRule.MatchString(got) {
			t.Errorf("geminiName(%q) = %q", name, got)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("%q and %q both became %q", other, name, got)
		}
		seen[got] = name
	}
}

func FuzzGeminiName(f *testing.F) {
	f.Add("", "get_weather")
	f.Add("p/", "a b c")
	f.Add("", strings.Repeat("é", 70))
	f.Fuzz(func(t *testing.T, prefix, name string) {
		if got := geminiName(prefix, name); !geminiRule.MatchString(got) {
			t.Fatalf("geminiName(%q, %q) = %q breaks Gemini's rule", prefix, name, got)
		}
	})
}
