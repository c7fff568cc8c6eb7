package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/shogun-dev/shogun/internal/yamlstrict"
)

// ByteSize is an amount of memory in bytes, written in a configuration file
// with a unit: memory_max: 2GB. Zero means no amount (no limit).
type ByteSize uint64

// sizeUnits are the units ParseSize accepts, lower-cased: the decimal ones
// (KB, MB, GB, TB: powers of 1000, as `free -H` and most vendors write) and
// the binary ones (KiB, MiB, GiB, TiB: powers of 1024, as `ps` and `top`
// count), with the one-letter forms that tools such as systemd and docker
// take (K, M, G, T: binary, as they read them).
var sizeUnits = []struct {
	name string
	mult float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// maxSize bounds a size: far beyond any machine's memory, and well inside
// uint64 and float64's exact integers.
const maxSize = 1 << 50

// ParseSize reads a size with a unit: "2GB", "512MiB", "300MB", "1.5G".
// "0" alone is zero. A bare number other than 0 is refused: 300 could mean
// bytes or megabytes.
func ParseSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	if t == "0" {
		return 0, nil
	}
	low := strings.ToLower(t)
	for _, u := range sizeUnits {
		num, ok := strings.CutSuffix(low, u.name)
		if !ok {
			continue
		}
		num = strings.TrimSpace(num)
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || num == "" || strings.ContainsAny(num, "eExXpP_") || math.IsNaN(v) || math.IsInf(v, 0) {
			break
		}
		b := v * u.mult
		if b < 0 || b > maxSize {
			return 0, fmt.Errorf("size %q is out of range (0 to 1 PiB)", s)
		}
		return ByteSize(math.Round(b)), nil
	}
	return 0, fmt.Errorf("size %q is not a number with a unit, such as \"2GB\", \"512MiB\" or \"300MB\"", s)
}

// String writes the size the way a person reads it: in binary units
// ("512 MiB") when it is a whole number of MiB, else in decimal ones with
// one decimal ("2.3 GB").
func (b ByteSize) String() string {
	if b != 0 && b%(1<<20) == 0 {
		return b.binary()
	}
	return b.decimal()
}

// Like writes b in the unit family other is written in by String, so that
// a measured amount and a limit read alike: "2.3 GB over 2 GB", "612 MiB
// over 512 MiB".
func (b ByteSize) Like(other ByteSize) string {
	if other != 0 && other%(1<<20) == 0 {
		return b.binary()
	}
	return b.decimal()
}

func (b ByteSize) decimal() string {
	return scaled(float64(b), 1000, []string{"B", "KB", "MB", "GB", "TB", "PB"})
}

func (b ByteSize) binary() string {
	return scaled(float64(b), 1024, []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"})
}

// scaled writes v in the largest unit it reaches, with one decimal unless
// the number is whole.
func scaled(v, base float64, units []string) string {
	i := 0
	for v >= base && i < len(units)-1 {
		v /= base
		i++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + units[i]
}

// size reads a ByteSize written as ParseSize takes it.
func (d *decoder) size(n *yaml.Node, key string) (ByteSize, bool) {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!str" && !(n.ShortTag() == "!!int" && n.Value == "0")) {
		d.errorf(n, "%q must be a size with a unit, such as \"2GB\" or \"512MiB\", got %s", key, yamlstrict.Describe(n))
		return 0, false
	}
	v, err := ParseSize(n.Value)
	if err != nil {
		d.errorf(n, "%q: %v", key, err)
		return 0, false
	}
	return v, true
}

// MinMemoryMax is the least memory_max a role may have, other than 0 (no
// bound): a CLI's runtime alone (node, python) takes more, so a smaller
// bound would only restart the role until it is fatal.
const MinMemoryMax ByteSize = 16_000_000

// memoryMax reads a memory_max: a size, 0 or at least MinMemoryMax.
func (d *decoder) memoryMax(n *yaml.Node, key string) (ByteSize, bool) {
	v, ok := d.size(n, key)
	if ok && v != 0 && v < MinMemoryMax {
		d.errorf(n, "%q %s is below %s: no CLI runs in so little (0 for no bound)", key, v, MinMemoryMax)
		return 0, false
	}
	return v, ok
}
