package app

// flagDoc is what the README's configuration tables say of a flag beyond
// its declaration (usage, default, environment variables): Markdown for
// the reader of the README, where the usage stays plain for --help.
type flagDoc struct {
	Default string // shown instead of the declared default
	Env     string // more variables that go with the flag
	Note    string // appended to the usage
}

// flagDocs are the README's notes by flag: "--name" for a global flag,
// "serve --name" and "node-agent --name" for a command's own.
var flagDocs = map[string]flagDoc{
	"--data-dir": {Note: "ignored with `--database-url`"},
	"--token-pepper-file": {Default: "embedded: generated once into the data dir",
		Env: "`PLATFORMAPI_TOKEN_PEPPER` (the value; wins)",
		Note: "without one every authenticated request is 503 `api_tokens_unconfigured`; one shorter " +
			"than 16 characters is refused at start"},
	"--redis-url": {Note: "the change feed drops cached credentials at once on every replica (see " +
		"[Many replicas](#many-replicas)); portal commands publish their changes to it too"},
	"--licence-public-key": {Note: "`serve --demo` also trusts the built-in demo key"},
	"--frozen-clock": {Note: "the database's clock is frozen by a trigger: rate budgets never " +
		"refill, the API switch is read once"},
	"--log-level": {Note: "JSON logs on stderr; one access line per request at `info` (probes, scrapes and " +
		"the AI gateway's `/ai-gateway/verify` at `debug`)"},
	"serve --allowed-networks": {Default: "loopback and private ranges",
		Note: "judged on the client address (see `--trusted-proxies`)"},
	"serve --trusted-proxies": {Default: "none", Note: "see [Behind a proxy, TLS](#behind-a-proxy-tls)"},
	"serve --mcp-allowed-origins": {Default: "none", Note: "loopback origins are `http://localhost`, " +
		"`http://127.0.0.1`, `http://[::1]`, any port"},
	"serve --tls-cert-file": {Default: "(empty: plain HTTP)", Note: "see [Behind a proxy, TLS](#behind-a-proxy-tls)"},
	"serve --gitlab-url":    {Env: "`PLATFORMAPI_GITLAB_TOKEN` (its token)"},
	"serve --auth-recheck": {Note: "the change feed is Redis, or PostgreSQL without it; tests use a " +
		"shorter re-check"},
	"serve --stop-delay": {Note: "the Helm chart sets `5s`, the systemd unit keeps `0`; see " +
		"[Deploying](#deploying)"},
	"serve --prometheus-url": {Note: "see `docs/monitoring.md`"},
	"serve --reconcile-interval": {Note: "a cache deleted by hand (or found corrupt) turns `missing`; one " +
		"found on disk is adopted once its agent hashed it against the model's central copy, and " +
		"one found corrupt is recorded `missing` (so a DELETE removes it)"},
	"serve --pipeline-webhook-url": {Env: "`PLATFORMAPI_PIPELINE_WEBHOOK_SECRET` (signs the bodies)",
		Note: "bodies signed with the secret (`X-Platformapi-Signature: sha256=…`)"},
	"serve --oidc-issuer": {Note: "of the [people's portal](#the-peoples-portal), discovered on first " +
		"sign-in; without it `/portal/login` says sign-in is not configured"},
	"serve --oidc-client-secret-file": {Env: "`PLATFORMAPI_OIDC_CLIENT_SECRET` (the value; wins)"},
	"serve --portal-url": {Note: "the provider sends browsers back to `<portal-url>/portal/callback` " +
		"(register that redirect URI); without it sign-in works only from this machine (a loopback " +
		"`Host` from a loopback client); an `https://` one " +
		"adds `Strict-Transport-Security: max-age=31536000` to every answer"},
	"node-agent --store-root":                {Default: "(required)"},
	"node-agent --cache-root":                {Default: "(required)"},
	"node-agent --key-file":                  {Default: "(required)", Note: "node keys start `pnk_`"},
	"node-agent --max-cache-bytes":           {Default: "`0` (no cap)"},
	"node-agent --max-copy-bytes-per-second": {Default: "`0` (no limit)"},
	"node-agent --tls-cert-file":             {Default: "(empty: HTTP)"},
	"node-agent --log-level":                 {Note: "JSON logs on stderr"},
}

// configExtraRows end the README's configuration table: what is no flag.
var configExtraRows = []string{
	"| `--version` | | | one line: version, VCS revision, Go version, API and platform versions " +
		"(`platformapi version` prints it as JSON) |",
	"| (serve) | `GOGC`, `GOMEMLIMIT` | `150`, (none) | Go's garbage collector: `serve` lets the heap grow " +
		"to 2.5 times what is live unless `GOGC` says otherwise (a few MB more memory for a few per cent less " +
		"CPU; see docs/benchmarks.md) |",
}
