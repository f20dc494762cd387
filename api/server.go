// Package api adapts the domain to HTTP: Huma operations under /api/v1 on a
// chi router, the shared middleware (request id, gate, authentication, rate
// limit, permissions, content type) and problem documents.
package api

import (
	"cmp"
	"crypto/ed25519"
	"log/slog"
	"net/http"
	"net/netip"
	"reflect"
	"slices"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"platformapi/resources"
	"platformapi/resources/tracing"
)

// Prefix is where the versioned API is mounted.
const Prefix = "/api/v1"

// Config is what the HTTP layer needs besides the services.
type Config struct {
	Pepper    resources.Pepper // token pepper; unconfigured → 503 api_tokens_unconfigured
	CursorKey []byte           // authenticates list cursors
	Networks  []netip.Prefix   // client networks served; nil → DefaultNetworks
	// TrustedProxies are the reverse proxies whose X-Forwarded-For or
	// Forwarded header names the client (see ClientAddrs); nil: none.
	TrustedProxies []netip.Prefix
	Limiter        RateLimiter // nil → in-process, RatePerMinute per token
	// AuthFailures counts failed authentications per client address; nil →
	// in-process, AuthFailuresPerMinute per address.
	AuthFailures RateLimiter
	Logger       *slog.Logger     // nil → slog.Default()
	Now          func() time.Time // nil → time.Now
	// GatewayBaseURL is the AI gateway's base URL (ending in /v1);
	// "" → resources.DefaultGatewayBaseURL.
	GatewayBaseURL string
	// LicenceKeys are the vendor public keys licence bundles are verified
	// against; none: every bundle is refused and the licence is missing or
	// invalid, so writes are refused.
	LicenceKeys []ed25519.PublicKey
	// Metrics is where the HTTP layer registers its Prometheus collectors;
	// nil → a private registry (nothing exported).
	Metrics prometheus.Registerer
	// MetricsGatherer, when set, is served at GET /metrics on this router
	// (leave it nil when metrics have a listener of their own).
	MetricsGatherer prometheus.Gatherer
	// RequestTimeout bounds each request (its context ends then); 0 →
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// BodyReadTimeout bounds the arrival of a request body; 0 →
	// DefaultBodyReadTimeout.
	BodyReadTimeout time.Duration
	// CredentialCache keeps authenticated credentials between requests; nil →
	// every request reads its token from PostgreSQL. Use it only with a change
	// feed calling Changed and Resync (or accept the re-check interval's delay).
	CredentialCache *CredentialCache
	// ViewRecheck is how often the in-memory views of the database are
	// reloaded whole — the live gateway keys behind /ai-gateway/verify and
	// the live tokens a refused address may present (the bound on a missed
	// change, as for cached credentials); 0 → DefaultRecheck.
	ViewRecheck time.Duration
	// GatewayKeyUseFlush is how often the keys' last uses are written to
	// PostgreSQL (one statement); 0 → DefaultGatewayUseFlush.
	GatewayKeyUseFlush time.Duration
	// Tracing, when set, makes a span of every request (named after its
	// operation); nil: tracing is off and nothing of it is installed.
	Tracing *tracing.Tracing
	// Stopping is closed when the server is stopping but still serves
	// (serve's --stop-delay): /readyz then answers 503 "stopping"; nil:
	// never.
	Stopping <-chan struct{}
}

// Services are the domain services the operations call.
type Services struct {
	Settings    resources.SettingsReader
	Credentials resources.Credentials
	Tokens      resources.TokenReader
	Audit       resources.AuditReader
	Idempotency resources.Idempotency
	Customers   resources.Customers
	Tenants     resources.Tenants
	Users       resources.Users
	CodeHost    resources.CodeHost
	Operations  resources.Operations
	Projects    resources.Projects
	Releases    resources.Releases
	AIModels    resources.AIModels
	AIGateway   resources.AIGateway
	AINodes     resources.AINodes
	NodeCaches  resources.NodeCaches
	Monitoring  resources.Monitor
	NodeAgents  resources.NodeAgents
	Licences    resources.Licences
	Brands      resources.Brands
	Readiness   resources.Readiness
}

// missing names the first service not set, or "".
func (s Services) missing() string {
	v := reflect.ValueOf(s)
	for i := range v.NumField() {
		if v.Field(i).IsNil() {
			return v.Type().Field(i).Name
		}
	}
	return ""
}

// Server is the HTTP side of platformapi: a chi router with the Huma API at
// /api/v1; other adapters (MCP) mount on the same router.
type Server struct {
	cfg       Config
	svc       Services
	router    chi.Router
	api       huma.API
	auth      *Authenticator
	cursors   Cursors
	apiSwitch *apiSwitch
	licence   *licenceCache
	metrics   *apiMetrics
	gateway   *liveGatewayKeys
	ops       []Op // every declared operation, in the order registered
	opByID    map[string]Op
	invokers  map[string]http.Handler // each GET operation, run in-process (Invoke)
}

// New builds the server and registers every operation. Every service must
// be set: a missing one is a wiring mistake and panics here, not on the
// first request that needs it.
func New(cfg Config, svc Services) *Server {
	if missing := svc.missing(); missing != "" {
		panic("api.New: Services." + missing + " is nil")
	}
	cfg = cfg.withDefaults()
	s := &Server{cfg: cfg, svc: svc, cursors: NewCursors(cfg.CursorKey),
		auth: NewAuthenticator(cfg.Pepper, svc.Credentials, cfg.Now, cfg.Logger, cfg.AuthFailures,
			cfg.ViewRecheck),
		apiSwitch: &apiSwitch{settings: svc.Settings, now: cfg.Now}, metrics: newMetrics(cfg.Metrics),
		licence: &licenceCache{svc: svc.Licences, verifier: resources.LicenceVerifier{Keys: cfg.LicenceKeys},
			now: cfg.Now}, gateway: newLiveGatewayKeys(svc.AIGateway, cfg)}
	s.auth.cache = cfg.CredentialCache
	s.router = chi.NewRouter()
	s.router.Use(append(s.rootChain(), middleware.GetHead)...)
	s.router.NotFound(s.notFound)
	s.router.MethodNotAllowed(s.methodNotAllowed)
	s.router.Route(Prefix, func(r chi.Router) {
		s.api = huma.NewAPI(s.humaConfig(), newOpAdapter(s, r))
		s.registerDocs(r)
	})
	s.api.UseMiddleware(s.annotate, s.deprecation, s.guard, s.contentType, s.inputGuard, s.idempotency,
		s.licenceGate)
	s.registerOperations()
	describeDocument(s.api.OpenAPI())
	s.registerOperability()
	s.registerGatewayVerify()
	return s
}

// withDefaults is cfg with every unset member at its default.
func (cfg Config) withDefaults() Config {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Networks == nil {
		cfg.Networks = DefaultNetworks
	}
	if cfg.Metrics == nil {
		cfg.Metrics = prometheus.NewRegistry()
	}
	cfg.RequestTimeout = cmp.Or(cfg.RequestTimeout, DefaultRequestTimeout)
	cfg.BodyReadTimeout = cmp.Or(cfg.BodyReadTimeout, DefaultBodyReadTimeout)
	cfg.ViewRecheck = cmp.Or(cfg.ViewRecheck, DefaultRecheck)
	cfg.GatewayKeyUseFlush = cmp.Or(cfg.GatewayKeyUseFlush, DefaultGatewayUseFlush)
	if cfg.Limiter == nil {
		cfg.Limiter = NewLocalLimiter(RatePerMinute, cfg.Now)
	}
	return cfg
}

// Router is the root handler; adapters mount further routes on it.
func (s *Server) Router() chi.Router { return s.router }

// API is the Huma API holding every operation.
func (s *Server) API() huma.API { return s.api }

// Ops returns every declared operation in the order it was registered
// (registerOperations' order, and each file's order within it).
func (s *Server) Ops() []Op { return slices.Clone(s.ops) }

// recordOp keeps the Op of each operation as Huma adds it (see Ops).
func (s *Server) recordOp(_ *huma.OpenAPI, hop *huma.Operation) {
	if op, ok := opOf(hop); ok {
		s.ops = append(s.ops, op)
		if s.opByID == nil {
			s.opByID = map[string]Op{}
		}
		s.opByID[op.ID] = op
	}
}

// Authenticator verifies bearer tokens for any adapter.
func (s *Server) Authenticator() *Authenticator { return s.auth }

// Logger is the server's logger.
func (s *Server) Logger() *slog.Logger { return s.cfg.Logger }

func (s *Server) registerOperations() {
	s.registerMeta()
	s.registerProblems()
	s.registerTokens()
	s.registerAudit()
	s.registerCustomers()
	s.registerTenants()
	s.registerUsers()
	s.registerOperationsAPI()
	s.registerProjects()
	s.registerReleases()
	s.registerAIModels()
	s.registerAINodes()
	s.registerNodeCaches()
	s.registerAIGateway()
	s.registerLicence()
	s.registerBrand()
}

func (s *Server) humaConfig() huma.Config {
	cfg := huma.DefaultConfig("Cloud Platform Management API", resources.APIVersion)
	cfg.Info.Description = "Management API of one cloud platform installation (platform " +
		resources.PlatformVersion + "). Every error is an RFC 9457 problem document."
	cfg.Info.Contact = &huma.Contact{Name: "Installation operator", URL: "https://example.invalid/support"}
	cfg.Tags = []*huma.Tag{
		{Name: "Meta", Description: "Who is calling, versions and the permission catalogue."},
		{Name: "API tokens", Description: "Metadata of API tokens and service accounts (tokens are minted in the portal)."},
		{Name: "Audit", Description: "The audit log of every change."},
		{Name: "Customers", Description: "Customers, their status and their code-host group."},
		{Name: "Tenants", Description: "Tenants of customers; each customer has one primary tenant."},
		{Name: "Users", Description: "People of the installation: invited, changed and deactivated, never deleted."},
		{Name: "Operations", Description: "Long-running work started by 202 answers."},
		{Name: "Projects", Description: "Projects of customers: provisioned in the background, retired, never torn down."},
		{Name: "Releases", Description: "Promotions, release state and the PROD data lock. Prod approvals happen only in the portal."},
		{Name: "AI", Description: "The private AI area: model catalogue, AI nodes, node caches and the AI gateway."},
		{Name: "Licence", Description: "The installation's licence: its state and installing a bundle. Writes need a valid licence."},
		{Name: "Brand", Description: "The installation's brand (conditional replace with ETag/If-Match) and its image assets."},
	}
	cfg.Formats = map[string]huma.Format{"application/json": JSONFormat, "json": JSONFormat}
	cfg.Servers = []*huma.Server{{URL: Prefix}}
	cfg.OpenAPIPath = "/openapi"
	cfg.DocsPath = "" // served from the binary by registerDocs
	cfg.SchemasPath = ""
	cfg.CreateHooks = nil // no $schema member or Link header
	cfg.RejectUnknownQueryParameters = true
	cfg.Transformers = append(cfg.Transformers, s.stampProblem)
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", BearerFormat: "svc_pat_… or svc_sat_…",
			Description: bearerDescription},
	}
	cfg.OpenAPI.OnAddOperation = append(cfg.OpenAPI.OnAddOperation, documentOperation, s.recordOp)
	return cfg
}

// documentOperation completes an operation's OpenAPI entry: the default
// problem answer, what its conditional headers bring (documentConditional),
// the headers the shared middleware sends with each answer,
// the limits its parameters' patterns imply, and application/json as an
// alias of merge-patch on PATCH. An operation without a request body drops
// the 422 Huma declares for any input: a bad parameter is 400
// invalid_parameter, and every 422 is a body's (apitest's status check
// fails the tests if one is ever answered undeclared).
func documentOperation(oapi *huma.OpenAPI, op *huma.Operation) {
	for _, status := range []string{"401", "500"} { // a public operation has no 401
		if r, ok := op.Responses[status]; ok {
			op.Responses["default"] = &huma.Response{Description: "Problem", Content: r.Content}
			break
		}
	}
	documentConditional(op)
	declareResponseHeaders(oapi, op)
	for _, p := range op.Parameters {
		if p.Schema != nil {
			deriveLimits(p.Schema)
		}
	}
	if op.RequestBody == nil {
		delete(op.Responses, "422")
		return
	}
	if mt, ok := op.RequestBody.Content["application/merge-patch+json"]; ok {
		op.RequestBody.Content["application/json"] = mt
	}
}
