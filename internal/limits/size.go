package limits

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseBytes parses a byte size as users write it: a plain count of bytes
// ("1048576"), or a number with a unit — decimal kB/KB, MB, GB, TB or
// binary KiB, MiB, GiB, TiB, case-insensitive, a space allowed before the
// unit ("512MiB", "1.5 GB"). "none" and "unlimited" return -1.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(t) {
	case "none", "unlimited":
		return -1, nil
	}
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	mult := map[string]float64{
		"": 1, "b": 1,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if num == "" || err != nil || mult == 0 || v < 0 {
		return 0, fmt.Errorf("invalid size %q: want bytes like 1048576, 512MiB or 2GB (or none)", s)
	}
	n := v * mult
	if n > math.MaxInt64 {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return int64(n), nil
}
