package control

import (
	"slices"
	"testing"
)

// Every route of the API says whether an agent may use it: a route added
// without a rule in routeRules fails here (at run time it would be a
// person's only), and so does a rule left behind for a route that is gone.
func TestEveryRouteIsClassified(t *testing.T) {
	rt := (&Server{}).router()
	for _, p := range rt.patterns {
		if _, ok := routeRules[p]; !ok {
			t.Errorf("route %q has no rule in routeRules (asker.go): say whether an agent may use it", p)
		}
	}
	for p, rule := range routeRules {
		if !slices.Contains(rt.patterns, p) {
			t.Errorf("routeRules names %q, which is not a route", p)
		}
		if rule.what == "" {
			t.Errorf("route %q: a refusal would not say what it refuses", p)
		}
	}
	// What an agent must never do stays a person's.
	for _, p := range []string{"POST /v1/approvals/{id}/answer", "POST /v1/roles/{id}/answer", "POST /v1/roles/{id}/type",
		"POST /v1/roles/{id}/stop", "POST /v1/stop", "POST /v1/reload", "PUT /v1/config/roles/{id}", "GET /v1/roles/{id}/attach"} {
		if routeRules[p].access != forPeople {
			t.Errorf("route %q is open to agents", p)
		}
	}
}
