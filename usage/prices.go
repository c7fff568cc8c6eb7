package usage

import (
	"bytes"
	_ "embed" // prices.yaml
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Price is what a model's tokens cost, in US dollars per million tokens.
type Price struct {
	Input      float64 `yaml:"input" json:"input"`
	Output     float64 `yaml:"output" json:"output"`
	CacheRead  float64 `yaml:"cache_read" json:"cache_read"`
	CacheWrite float64 `yaml:"cache_write" json:"cache_write"`
}

// Prices price models by name: a model takes the price of the longest
// entry its name starts with.
type Prices struct {
	// AsOf is when the table's prices were read ("2026-11").
	AsOf   string           `yaml:"as_of"`
	Models map[string]Price `yaml:"models"`
}

//go:embed prices.yaml
var pricesYAML []byte

// DefaultPrices is the table shipped in prices.yaml.
func DefaultPrices() Prices {
	var p Prices
	dec := yaml.NewDecoder(bytes.NewReader(pricesYAML))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		panic(fmt.Sprintf("usage: prices.yaml: %v", err)) // a build that ships a broken table
	}
	return p
}

// With returns p with the entries of over added or replacing its own (a
// user's usage.prices).
func (p Prices) With(over map[string]Price) Prices {
	out := Prices{AsOf: p.AsOf, Models: make(map[string]Price, len(p.Models)+len(over))}
	for k, v := range p.Models {
		out.Models[k] = v
	}
	for k, v := range over {
		out.Models[k] = v
	}
	return out
}

// Cost estimates what t cost on model; known is false when no entry
// prices the model (the cost is then 0, and the tokens still counted).
func (p Prices) Cost(model string, t Tokens) (dollars float64, known bool) {
	best, found := "", false
	for name := range p.Models {
		if strings.HasPrefix(model, name) && len(name) >= len(best) {
			best, found = name, true
		}
	}
	if !found {
		return 0, false
	}
	pr := p.Models[best]
	return (float64(t.Input)*pr.Input + float64(t.Output)*pr.Output +
		float64(t.CacheRead)*pr.CacheRead + float64(t.CacheWrite)*pr.CacheWrite) / 1e6, true
}
