package skills

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/shogun-dev/shogun/store"
)

// SyntheticRoles are the roles GenerateHistory records tasks for.
var SyntheticRoles = []string{"shogun", "karo", "ashigaru1", "ashigaru2", "ashigaru3", "ashigaru4", "ashigaru5"}

// GenerateHistory adds n finished tasks to st, shaped like a busy team's
// history, for benchmarks and tests of Scan at scale; never use it on a
// real workspace. Most tasks come from a few hundred kinds of recurring
// work (the same request for different components, worded a little
// differently each time, some kinds far more common than others), about
// one in seven is one of a kind, about one in eight fails or is blocked,
// and one in two hundred reports proposes a skill. The same seed gives the
// same history. It syncs SyntheticRoles, starts a run, and writes through
// store.InsertFinishedTasks in batches: 100,000 tasks take a few seconds.
func GenerateHistory(st *store.Store, n int, seed uint64) error {
	start := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var roles []store.RoleInfo
	for _, r := range SyntheticRoles {
		roles = append(roles, store.RoleInfo{ID: r, Name: r, PromptPath: "roles/" + r + ".md", Enabled: true})
	}
	if err := st.SyncRoles(roles, start); err != nil {
		return fmt.Errorf("generate history: %w", err)
	}
	run, err := st.StartRun(1, "synthetic", start)
	if err != nil {
		return fmt.Errorf("generate history: %w", err)
	}
	g := newSynth(seed)
	const batch = 20000
	step := 180 * 24 * time.Hour / time.Duration(max(n, 1))
	for done := 0; done < n; {
		m := min(batch, n-done)
		recs := make([]store.FinishedTaskRecord, m)
		for i := range recs {
			at := start.Add(time.Duration(done+i) * step)
			recs[i] = g.task(at)
		}
		if _, err := st.InsertFinishedTasks(run.ID, recs); err != nil {
			return fmt.Errorf("generate history: %w", err)
		}
		done += m
	}
	return nil
}

// SyntheticTasks returns n tasks shaped like GenerateHistory's (the same
// seed gives the same tasks), created a minute apart from start: for
// benchmarks that feed a running team work like its history's.
func SyntheticTasks(n int, seed uint64, start time.Time) []store.FinishedTaskRecord {
	g := newSynth(seed)
	out := make([]store.FinishedTaskRecord, n)
	for i := range out {
		out[i] = g.task(start.Add(time.Duration(i) * time.Minute))
	}
	return out
}

// synth makes the synthetic tasks.
type synth struct {
	r        *rand.Rand
	families []family
	zipf     *rand.Zipf
	vocab    []string
}

// family is one kind of recurring work.
type family struct {
	verb, object, area string
	role               string
	steps              []string
	files              []string
	pitfall            string
	skill              string
}

var (
	synthVerbs = []string{"Add", "Fix", "Refactor", "Update", "Document", "Test", "Migrate", "Speed up", "Remove", "Rename",
		"Review", "Harden"}
	synthObjects = []struct{ name, area, dir, ext string }{
		{"login page", "frontend", "web/src/pages", "tsx"}, {"signup form", "frontend", "web/src/forms", "tsx"},
		{"password reset flow", "frontend", "web/src/auth", "tsx"}, {"settings screen", "frontend", "web/src/settings", "tsx"},
		{"dark mode toggle", "frontend", "web/src/theme", "ts"}, {"search box", "frontend", "web/src/search", "tsx"},
		{"data table pagination", "frontend", "web/src/table", "tsx"}, {"file upload widget", "frontend", "web/src/upload", "tsx"},
		{"REST endpoint", "backend", "api/handlers", "go"}, {"GraphQL resolver", "backend", "api/graph", "go"},
		{"rate limiter", "backend", "api/middleware", "go"}, {"session store", "backend", "api/session", "go"},
		{"webhook receiver", "backend", "api/webhooks", "go"}, {"background job queue", "backend", "worker/jobs", "go"},
		{"email sender", "backend", "worker/mail", "go"}, {"audit log", "backend", "api/audit", "go"},
		{"database migration", "database", "db/migrations", "sql"}, {"index on orders", "database", "db/schema", "sql"},
		{"backup script", "ops", "ops/backup", "sh"}, {"Docker image", "ops", "deploy/docker", "Dockerfile"},
		{"CI pipeline", "ci", ".github/workflows", "yml"}, {"release workflow", "ci", ".github/workflows", "yml"},
		{"flaky integration test", "tests", "tests/integration", "go"}, {"end-to-end test", "tests", "tests/e2e", "ts"},
		{"load test", "tests", "tests/load", "js"}, {"README section", "docs", "docs", "md"},
		{"API reference", "docs", "docs/api", "md"}, {"changelog entry", "docs", "docs", "md"},
		{"metrics dashboard", "observability", "ops/grafana", "json"}, {"alert rule", "observability", "ops/alerts", "yaml"},
		{"tracing spans", "observability", "api/tracing", "go"}, {"feature flag", "backend", "api/flags", "go"},
		{"payment webhook", "payments", "api/payments", "go"}, {"invoice PDF", "payments", "worker/invoices", "go"},
		{"currency formatting", "payments", "web/src/money", "ts"}, {"i18n strings", "frontend", "web/src/i18n", "json"},
		{"accessibility labels", "frontend", "web/src/a11y", "tsx"}, {"CSV export", "backend", "api/export", "go"},
		{"cache layer", "backend", "api/cache", "go"}, {"config loader", "backend", "internal/config", "go"},
	}
	synthComponents = []string{"billing", "accounts", "orders", "inventory", "checkout", "profile", "admin panel", "reports",
		"notifications", "onboarding", "catalog", "shipping", "support inbox", "analytics", "teams", "projects",
		"calendar", "chat", "search", "audit", "payroll", "partners", "mobile app", "public site"}
	// synthSteps are a kind of work's steps: {verb}, {object}, {file},
	// {test}, {dir}, {area} and {flag} are filled in per kind, so that
	// kinds share phrasing but not meaning; the last two lines are the
	// checklist every command carries.
	synthSteps = []string{
		"Open {file} and find where the {object} is wired in.",
		"{verb} the {object} in {file}, keeping its public interface.",
		"Cover the {object} with a test in {test}.",
		"Put the {object} change behind the {flag} flag until it is reviewed.",
		"Check {dir} for other callers of the {object}.",
		"Update docs/{area}.md with the {object} change.",
		"Ask the karo before touching shared configuration.",
		"Run make test and make lint before reporting.",
	}
	synthDoneBank = []string{
		"Changed %s and added a test for the new case.",
		"All tests pass; lint is clean.",
		"Updated the documentation to match.",
		"Deployed to staging and checked the dashboard.",
		"Kept the old path working for one release.",
	}
	synthPitfalls = []string{
		"Do not run the migration twice: it is not idempotent.",
		"Avoid editing generated files; regenerate them with make generate.",
		"Never commit the staging credentials in .env files.",
		"Watch out for the timezone: the tests assume UTC.",
		"Careful: the cache must be invalidated after the change.",
	}
)

func newSynth(seed uint64) *synth {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := &synth{r: r}
	for vi, v := range synthVerbs {
		for oi, o := range synthObjects {
			if (vi*7+oi*3)%5 == 0 { // not every verb suits every object: keep about 380 kinds
				continue
			}
			f := family{verb: v, object: o.name, area: o.area, role: SyntheticRoles[2+(vi+oi)%5]}
			base := strings.ReplaceAll(o.name, " ", "_")
			file := o.dir + "/" + base + "." + o.ext
			test := o.dir + "/" + base + "_test." + o.ext
			if o.ext == "Dockerfile" {
				file, test = o.dir+"/Dockerfile", "tests/docker/"+base+"_test.sh"
			}
			f.files = []string{file, test}
			fill := strings.NewReplacer("{verb}", v, "{object}", o.name, "{file}", file, "{test}", test, "{dir}", o.dir,
				"{area}", o.area, "{flag}", strings.ToLower(strings.ReplaceAll(v, " ", "_"))+"_"+base)
			for _, st := range synthSteps {
				f.steps = append(f.steps, fill.Replace(st))
			}
			f.pitfall = synthPitfalls[(vi+oi)%len(synthPitfalls)]
			f.skill = Slug(v + " " + o.name)
			g.families = append(g.families, f)
		}
	}
	g.zipf = rand.NewZipf(r, 1.1, 8, uint64(len(g.families)-1))
	syll := []string{"ka", "ro", "mi", "te", "su", "na", "vo", "li", "pe", "zu", "gan", "tor", "bel", "kri", "sha", "dun"}
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for j := 0; j < 2+i%3; j++ {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		g.vocab = append(g.vocab, b.String())
	}
	return g
}

func (g *synth) words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = g.vocab[g.r.IntN(len(g.vocab))]
	}
	return strings.Join(w, " ")
}

// task makes one finished task, created at at.
func (g *synth) task(at time.Time) store.FinishedTaskRecord {
	r := g.r
	rec := store.FinishedTaskRecord{From: "karo", Status: store.StatusDone, CreatedAt: at, FinishedAt: at.Add(time.Duration(5+r.IntN(90)) * time.Minute)}
	if r.IntN(7) == 0 {
		// One of a kind.
		rec.Role = SyntheticRoles[2+r.IntN(5)]
		rec.Title = upperFirst(g.words(3 + r.IntN(4)))
		rec.Body = upperFirst(g.words(12+r.IntN(20))) + ".\n" + upperFirst(g.words(8+r.IntN(10))) + "."
		rec.Summary = "Done: " + rec.Title
		rec.Details = upperFirst(g.words(10)) + "."
		rec.Tags = []string{"misc"}
		return rec
	}
	f := g.families[g.zipf.Uint64()]
	comp := synthComponents[r.IntN(len(synthComponents))]
	rec.Role = f.role
	if r.IntN(4) == 0 {
		rec.Role = SyntheticRoles[2+r.IntN(5)]
	}
	switch r.IntN(3) {
	case 0:
		rec.Title = fmt.Sprintf("%s %s for %s", f.verb, f.object, comp)
	case 1:
		rec.Title = fmt.Sprintf("%s the %s in %s", f.verb, f.object, comp)
	default:
		rec.Title = fmt.Sprintf("%s %s (%s, ticket %d)", f.verb, f.object, comp, 1000+r.IntN(9000))
	}
	var body strings.Builder
	fmt.Fprintf(&body, "%s the %s of the %s module.\n", f.verb, f.object, comp)
	for _, st := range f.steps {
		if r.IntN(4) == 0 {
			continue
		}
		body.WriteString("- " + st + "\n")
	}
	if r.IntN(2) == 0 {
		body.WriteString(upperFirst(g.words(3+r.IntN(4))) + ".\n")
	}
	rec.Body = body.String()
	rec.Tags = []string{f.area}
	if r.IntN(3) == 0 {
		rec.Tags = append(rec.Tags, strings.ReplaceAll(comp, " ", "-"))
	}
	rec.Files = append([]string(nil), f.files[:1+r.IntN(2)]...)
	done := synthDoneBank[r.IntN(len(synthDoneBank))]
	rec.Summary = "Done: " + rec.Title
	rec.Details = fillIn(done, f.files[0]) + "\n" + fillIn(synthDoneBank[r.IntN(len(synthDoneBank))], f.files[1]) + "\n"
	switch k := r.IntN(25); {
	case k < 2:
		rec.Status = store.StatusFailed
		rec.Summary = "Failed: " + rec.Title
		rec.Details = f.pitfall + "\n" + upperFirst(g.words(6)) + ".\n"
	case k == 2:
		rec.Status = store.StatusBlocked
		rec.Summary = "Blocked: waiting for access to the " + comp + " staging database"
		rec.Details = "Could not reach the " + comp + " staging database; asked the karo for access.\n"
	case k == 3 && r.IntN(8) == 0:
		rec.SkillName = f.skill
		rec.SkillDescription = fmt.Sprintf("How to %s %s safely. Use when a task asks to %s %s.",
			strings.ToLower(f.verb), f.object, strings.ToLower(f.verb), f.object)
	}
	return rec
}

// fillIn fills a %s in s with a file path.
func fillIn(s, file string) string {
	if !strings.Contains(s, "%s") {
		return s
	}
	return fmt.Sprintf(s, file)
}
