package agentsim

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestValidateDelegate(t *testing.T) {
	for _, tc := range []struct {
		roles []string
		ok    bool
	}{
		{[]string{"ashigaru1", "ashigaru_2", "Ninja-3"}, true},
		{[]string{""}, false},
		{[]string{"two words"}, false},
		{[]string{"../x"}, false},
		{[]string{"-x"}, false},
		{[]string{"ashigaru1", "ashigaru1"}, false},
	} {
		o := Options{Delegate: tc.roles}
		if err := o.Validate(); (err == nil) != tc.ok {
			t.Errorf("Delegate %q: Validate() = %v, want ok %v", tc.roles, err, tc.ok)
		}
	}
}

func TestTaskTags(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want []string
	}{
		{"tags: [a, b]", []string{"a", "b"}},
		{"tags: a", []string{"a"}},
		{"tags: ~", nil},
		{"tags: {a: b}", nil},
		{"tags: [a, [b], ~, c]", []string{"a", "c"}},
		{"other: x", nil},
	} {
		var tk task
		if err := yaml.Unmarshal([]byte(tc.yaml), &tk); err != nil {
			t.Errorf("%s: %v", tc.yaml, err)
			continue
		}
		if !reflect.DeepEqual([]string(tk.Tags), tc.want) {
			t.Errorf("%s: tags %q, want %q", tc.yaml, tk.Tags, tc.want)
		}
	}
}

func TestHandoffMatch(t *testing.T) {
	h := &handoff{parts: []part{
		{role: "ashigaru1", title: "Walls (part 1 of 2)"},
		{role: "ashigaru2", title: "Walls (part 2 of 2)", reported: true},
	}}
	for _, tc := range []struct {
		line     string
		part     int
		strength int
	}{
		{"Report from ashigaru1 on 'Walls (part 1 of 2)': read r.yaml", 0, titleMatch},
		{"  Report from ashigaru1", 0, roleMatch},
		{"Report from ashigaru1: done", 0, roleMatch},
		{"Report from ashigaru10 on 'Walls (part 1 of 2)'", -1, noMatch},
		{"report from ashigaru1", -1, noMatch},
		{"Please Report from ashigaru1", -1, noMatch},
		// Already reported: a repeat naming the part is still its own,
		// a bare one is nobody's.
		{"Report from ashigaru2 on 'Walls (part 2 of 2)'", 1, titleMatch},
		{"Report from ashigaru2", -1, noMatch},
	} {
		if i, s := h.match(tc.line); i != tc.part || s != tc.strength {
			t.Errorf("match(%q) = part %d strength %d, want %d %d", tc.line, i, s, tc.part, tc.strength)
		}
	}
}

func TestDelegatorWritesEachCommandOnce(t *testing.T) {
	ws := t.TempDir()
	d := newDelegator([]string{"ashigaru1", "ashigaru2"}, "karo/x", ws, 0, false)
	tk := &task{TaskID: "t:1", Title: "T", Body: "B", ReportTo: "r.yaml"}
	dir := filepath.Join(ws, "runtime", "queue", "commands")

	// A file of the same name waiting from an earlier run is not replaced.
	writeFile(t, filepath.Join(dir, "karo_x-t_1-2.yaml"), "id: earlier\n")
	_, h, err := d.handle(context.Background(), tk)
	if err != nil || h == nil {
		t.Fatalf("handle: handoff %v, err %v", h, err)
	}
	if !h.parts[0].written || h.parts[1].written {
		t.Errorf("written flags %v %v, want true false", h.parts[0].written, h.parts[1].written)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "karo_x-t_1-2.yaml")); string(data) != "id: earlier\n" {
		t.Errorf("an existing command file was replaced: %q", data)
	}
	data, err := os.ReadFile(filepath.Join(dir, "karo_x-t_1-1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "id: t:1-ashigaru1") || !strings.Contains(string(data), "from: karo/x") {
		t.Errorf("command %q", data)
	}

	// Taken away by the supervisor, then the task again: nothing is written.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, h, err = d.handle(context.Background(), tk); err != nil || h.parts[0].written || h.parts[1].written {
		t.Fatalf("second handle: %+v, %v", h, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("commands written again: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := newDelegator([]string{"a"}, "k", ws, 0, false).handle(ctx, tk); err == nil {
		t.Error("an interrupted handoff wrote its commands")
	}
}
