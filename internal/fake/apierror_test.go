package fake

import (
	"testing"
	"time"
)

func TestDurationString(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{37 * time.Second, "37s"},
		{1500 * time.Millisecond, "1.500s"},
		{1500 * time.Microsecond, "0.001500s"},
		{time.Nanosecond, "0.000000001s"},
		{0, "0s"},
	} {
		if got := durationString(tc.d); got != tc.want {
			t.Errorf("durationString(%v) = %q; want %q", tc.d, got, tc.want)
		}
	}
}
