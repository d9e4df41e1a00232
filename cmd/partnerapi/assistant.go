package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"partnerapi/api"
	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/assistantsql"
	"partnerapi/internal/assistant/billjournal"
	"partnerapi/internal/assistant/chatapi"
	"partnerapi/internal/assistant/upstream"
	"partnerapi/internal/background"
	"partnerapi/internal/inference/kernels"
	"partnerapi/internal/inference/local"
	"partnerapi/internal/inference/model"
	"partnerapi/internal/sqldb"
	"partnerapi/internal/web"
)

// assistantModule wires the assistant API.
type assistantModule struct {
	grpc                           assistantGRPCConfig // the gRPC listener's flags (assistant_grpc.go)
	limitPers, limitB2B, limitCorp int
	tokenTTL                       time.Duration // --assistant-token-ttl (reference §3.1: 30 minutes)
	aiCheckThreshold               float64
	fileQuotaMB                    int64
	maxBodyMB                      int64
	modelIDs                       string
	maxContext                     int
	concurrency                    int
	queueDepth                     int
	prefixCache                    int
	kvCache                        string
	joinStep                       time.Duration
	kvPoolIdle                     time.Duration
	upstreams                      upstreamFlag
	upstreamConcurrency            int
	upstreamQueue                  int
	aliases                        aliasFlag
	authFailures                   int
	authFailureWindow              time.Duration
	authAddrFailures               int
}

func (*assistantModule) name() string        { return "assistant" }
func (*assistantModule) defaultAddr() string { return "127.0.0.1:9444" }

func (m *assistantModule) registerFlags(fs *flag.FlagSet) {
	fs.IntVar(&m.limitPers, "assistant-limit-pers", 1, "concurrent requests per ASSISTANT_API_PERS client")
	fs.IntVar(&m.limitB2B, "assistant-limit-b2b", 10, "concurrent requests per ASSISTANT_API_B2B client")
	fs.IntVar(&m.limitCorp, "assistant-limit-corp", 10, "concurrent requests per ASSISTANT_API_CORP client")
	fs.DurationVar(&m.tokenTTL, "assistant-token-ttl", assistant.DefaultTokenTTL, "how long an access token from /api/v2/oauth lives (the provider's 30 minutes; expires_at says it): whole seconds from 1s to 24h, short for testing a client's token renewal")
	m.aiCheckThreshold = assistant.AICheckThreshold
	fs.Func("assistant-ai-check-threshold", "POST /ai/check: mean surprisal (nats a token, > 0) under which a window of 8 tokens counts as generated (default 2.3)",
		func(v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f > 0) || math.IsInf(f, 0) {
				return fmt.Errorf("want a positive number of nats, got %q", v)
			}
			m.aiCheckThreshold = f
			return nil
		})
	fs.Int64Var(&m.fileQuotaMB, "assistant-file-quota-mb", assistant.DefaultFileQuotaBytes>>20, "MiB that one client's uploaded files may take in all; an upload over it is answered 413 (0: no limit)")
	fs.Int64Var(&m.maxBodyMB, "assistant-max-body-mb", 1, "MiB a request body may take (chat messages, inputs to count or embed; 0: the default, 1); a larger one is answered 413. File uploads have their own cap")
	fs.StringVar(&m.modelIDs, "assistant-model-ids", "versioned", "model ids in /models: versioned (name:version) or bare (name)")
	fs.IntVar(&m.maxContext, "assistant-max-context", 0, "cap on a model's context window (0: the model's own)")
	fs.IntVar(&m.concurrency, "assistant-engine-concurrency", 10, "parallel generations per model, sharing one decode batch (0: the engine's default, 10)")
	fs.IntVar(&m.queueDepth, "assistant-engine-queue", 64, "requests per model that may wait for a batch slot; beyond them a request is answered 429 at once (0: the engine's default, 64)")
	fs.IntVar(&m.prefixCache, "assistant-prefix-cache", 4, "finished prompts per model whose KV cache is kept for prefix reuse (0: none; prefixes shared with running requests are reused either way)")
	fs.StringVar(&m.kvCache, "assistant-kv-cache", "default", "KV cache type of the embedded engine: f16, q8 (int8, half the bytes) or default (q8 where the CPU has its AVX2 or AVX-512 kernels)")
	fs.DurationVar(&m.joinStep, "assistant-join-step", local.DefaultJoinStep, "longest decode step of the running streams while other requests' prompts join the embedded engine's batch (the prompt chunk riding in each step is sized to it, 16–512 tokens; 0: fixed 16-token chunks)")
	fs.DurationVar(&m.kvPoolIdle, "assistant-kv-pool-idle", local.DefaultKVPoolIdle, "how long a model's embedded engine must be idle before the KV memory finished requests left for the next ones goes back to the system (0: kept)")
	fs.Var(&m.aliases, "assistant-model-alias", "ALIAS=MODEL: serve MODEL under the name ALIAS too, e.g. GigaChat=stories260K for clients that ask for the provider's model names (repeatable)")
	fs.Var(&m.upstreams, "assistant-upstream", "NAME=URL[#model=ID&type=embedder]: serve model NAME from an OpenAI-compatible server (repeatable; a NAME given again adds a replica)")
	fs.IntVar(&m.upstreamConcurrency, "assistant-upstream-concurrency", 10, "chats and embeddings sent to one upstream replica at a time (0: no limit)")
	fs.IntVar(&m.upstreamQueue, "assistant-upstream-queue", upstream.DefaultMaxQueue, "requests per upstream model that may wait for a replica under --assistant-upstream-concurrency; beyond them a request is answered 429 at once (0: the default, 64)")
	// The counts are kept as assistant.Config reads them, zero for the
	// default, so that a module built without its flags parsed (tests)
	// throttles as serve does by default; a flag's 0 is off, -1 there.
	fs.Func("assistant-auth-failures", fmt.Sprintf("failed client-secret checks of one client id from one address within --assistant-auth-failure-window after which the token endpoints answer that address 429 for that id until the window passes; 0: no count per id (default %d)", assistant.DefaultAuthFailures),
		func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("want a number of failures, 0 for no count per id, got %q", v)
			}
			m.authFailures = n
			if n == 0 {
				m.authFailures = -1
			}
			return nil
		})
	fs.Func("assistant-auth-address-failures", fmt.Sprintf("failed client-secret checks from one address, of any client ids, within --assistant-auth-failure-window after which the token endpoints answer that address 429 for every id until the window passes; a cap on made-up ids and on the rows they write; 0: no cap (default %d)", assistant.DefaultAuthAddrFailures),
		func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("want a number of failures, 0 for no cap, got %q", v)
			}
			m.authAddrFailures = n
			if n == 0 {
				m.authAddrFailures = -1
			}
			return nil
		})
	fs.Func("assistant-auth-failure-window", fmt.Sprintf("the window of --assistant-auth-failures and --assistant-auth-address-failures (default %v)", assistant.DefaultAuthFailureWindow),
		func(v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("want a positive duration, got %q", v)
			}
			m.authFailureWindow = d
			return nil
		})
	m.grpc.registerFlags(fs) // --assistant-grpc-addr, assistant_grpc.go
}

func (*assistantModule) migrate(ctx context.Context, db *sqldb.DB) error {
	return assistantsql.Migrate(ctx, db)
}

func (m *assistantModule) build(ctx context.Context, d deps) (built, error) {
	if m.modelIDs != "" && m.modelIDs != "versioned" && m.modelIDs != "bare" {
		return built{}, fmt.Errorf("--assistant-model-ids: want versioned or bare, got %q", m.modelIDs)
	}
	// Zero is a module built without its flags parsed: the provider's 30
	// minutes.
	if m.tokenTTL != 0 {
		if err := checkTokenTTL("--assistant-token-ttl", m.tokenTTL); err != nil {
			return built{}, err
		}
	}
	if m.fileQuotaMB < 0 || m.fileQuotaMB > math.MaxInt64>>20 {
		return built{}, fmt.Errorf("--assistant-file-quota-mb: want 0 (no limit) or a number of MiB, got %d", m.fileQuotaMB)
	}
	// The provider publishes no input size limit (reference §5), so the
	// cap is the operator's. Zero is the platform's default, 1 MiB, as
	// for a module built without its flags parsed.
	if m.maxBodyMB < 0 || m.maxBodyMB > math.MaxInt64>>21 {
		return built{}, fmt.Errorf("--assistant-max-body-mb: want a number of MiB (0: the default, 1), got %d", m.maxBodyMB)
	}
	maxBody := max(m.maxBodyMB, 1) << 20
	fileQuota := m.fileQuotaMB << 20
	if fileQuota == 0 {
		fileQuota = -1 // no limit (assistant.Config reads zero as its default)
	}
	kvCache, err := model.ParseKVType(m.kvCache)
	if err != nil {
		return built{}, fmt.Errorf("--assistant-kv-cache: %w", err)
	}
	joinStep := m.joinStep
	if joinStep <= 0 {
		joinStep = -1 // fixed chunks (local.Options reads zero as its default)
	}
	kvPoolIdle := m.kvPoolIdle
	if kvPoolIdle <= 0 {
		kvPoolIdle = -1 // kept (local.Options reads zero as its default)
	}
	if m.queueDepth < 0 {
		return built{}, fmt.Errorf("--assistant-engine-queue: want 0 (the engine's default) or more, got %d", m.queueDepth)
	}
	prefixCache := m.prefixCache
	if prefixCache <= 0 {
		prefixCache = -1 // none (local.Options reads zero as its default)
	}
	engine, err := openEngine(d.modelsDir, local.Options{MaxContext: m.maxContext, Concurrency: m.concurrency, QueueDepth: m.queueDepth,
		PrefixCache: prefixCache, KVCache: kvCache, JoinStep: joinStep, KVPoolIdle: kvPoolIdle})
	if err != nil {
		return built{}, err
	}
	if d.metrics != nil {
		if err := d.metrics.Registry.Register(newEngineCollector(engine)); err != nil {
			d.log.Warn("assistant: engine metrics not registered", "err", err)
		}
	}
	models, _ := engine.Models(ctx)
	if len(models) > 0 {
		split := kernels.CalibrateSplit() // measured when the engine opened
		d.log.Info("assistant: local engine", "models", len(models), "kernels", kernels.ISA(), "kv_cache", kvCache.String(),
			"split_handoff", split.Handoff.String(), "split_from_macs", split.Threshold)
	}
	if len(models) == 0 {
		// The command names the directory serve reads, so that it can be
		// pasted as it is: a pull into the default ./models would not be
		// served by a serve given another --models-dir.
		dir := shellWord(d.modelsDir)
		d.log.Warn("assistant: no models served; pull one with `partnerapi models pull hf.co/OWNER/REPO/FILE.gguf --models-dir "+dir+
			"` (or copy NAME.gguf, optionally with a NAME.json manifest, into "+dir+") and restart",
			"models_dir", d.modelsDir)
	}
	served := make([]string, 0, len(models)+len(m.upstreams))
	for _, mi := range models {
		served = append(served, mi.Name)
	}
	for name := range m.upstreams {
		// An upstream named as a file of --models-dir took the name over:
		// the local model was neither listed nor reachable, and nothing
		// said so. Which of the two was meant is the deployment's to say.
		if slices.Contains(served, name) {
			_ = engine.Close()
			return built{}, fmt.Errorf("--assistant-upstream %s: %s is also a model of --models-dir %s (%s.gguf), which the upstream would hide; name one of them otherwise", name, name, d.modelsDir, name)
		}
	}
	for name := range m.upstreams {
		served = append(served, name)
	}
	if err := m.aliases.check(served); err != nil {
		_ = engine.Close()
		return built{}, err
	}
	if m.upstreamConcurrency < 0 || m.upstreamQueue < 0 {
		_ = engine.Close()
		return built{}, fmt.Errorf("--assistant-upstream-concurrency and --assistant-upstream-queue: want 0 or more, got %d and %d", m.upstreamConcurrency, m.upstreamQueue)
	}
	routed, pools := routeUpstreams(m.upstreams, engine, upstream.PoolOptions{Log: d.log, MaxInFlight: m.upstreamConcurrency, MaxQueue: m.upstreamQueue})
	routed = m.aliases.aliased(routed)
	closeEngines := func() {
		// The pools' probes stop before the local engine closes; requests
		// are over by now (the listeners drained).
		for _, p := range pools {
			p.Close()
		}
		_ = engine.Close()
	}
	if d.metrics != nil && len(pools) > 0 {
		if err := d.metrics.Registry.Register(newUpstreamCollector(pools)); err != nil {
			d.log.Warn("assistant: upstream metrics not registered", "err", err)
		}
	}
	var billed func(string, bool, int64)
	if d.metrics != nil {
		billed = billedTokens(d.metrics.Registry, d.log)
	}
	// The bills kept while the database cannot take them are journaled in
	// the data directory, which serve has on PostgreSQL too (--data-dir,
	// unlocked there): each process has a journal of its own in it and
	// takes over, at start, those of processes gone.
	journal, err := billjournal.Open(filepath.Join(d.dataDir, billJournalDir), d.log)
	if err != nil {
		closeEngines()
		return built{}, fmt.Errorf("kept bills: %w (--data-dir)", err)
	}
	svc := assistant.NewService(assistantsql.New(d.db), routed, assistant.Config{
		TokenTTL:         m.tokenTTL,
		Billed:           billed,
		Limits:           map[assistant.Scope]int{assistant.ScopePers: m.limitPers, assistant.ScopeB2B: m.limitB2B, assistant.ScopeCorp: m.limitCorp},
		BareIDs:          m.modelIDs == "bare",
		AICheckThreshold: m.aiCheckThreshold,
		FileQuotaBytes:   fileQuota,
		// Failed secret checks are counted in the database, by client id
		// and the address web.ClientIP resolves (--trusted-proxies).
		AuthFailures:      m.authFailures,
		AuthFailureWindow: m.authFailureWindow,
		AuthAddrFailures:  m.authAddrFailures,
		Log:               d.log,
		// On SQLite serve holds the data directory's lock, so no other
		// process shares the database and the count in memory is the
		// whole count: the limit costs no write there. On PostgreSQL
		// every slot is a lease in the database, so the limit holds
		// across the processes sharing it.
		LocalLimits: d.db.Dialect == sqldb.SQLite,
		// A bill the database cannot take for the moment is kept and
		// charged when it can. The bill retries and the lease renewals
		// run only while there is something to do, so they log a
		// failing streak once and when it ends, with no last-success
		// series, which would read as a stalled worker while idle.
		Unavailable: sqldb.Unavailable,
		Journal:     journal,
		Billing:     (*background.Metrics)(nil).Worker("assistant-billing", d.log),
		Renewals:    (*background.Metrics)(nil).Worker("assistant-leases", d.log),
	})
	if d.metrics != nil {
		kept := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "partnerapi_assistant_kept_bills",
			Help: "Bills kept because the database could not take them, journaled in the data directory (those a previous process left included); they are charged when it can again.",
		}, func() float64 { return float64(svc.KeptBills()) })
		if err := d.metrics.Registry.Register(kept); err != nil {
			d.log.Warn("assistant: kept-bill metric not registered", "err", err)
		}
	}
	grpcSidecars, err := assistantGRPCSidecars(m.grpc, svc, d, maxBody)
	if err != nil {
		closeEngines()
		_ = journal.Close()
		return built{}, err
	}
	mux := chatapi.NewServer(chatapi.Deps{Metrics: d.metrics, Log: d.log, Service: svc})
	return built{api: web.API{
		Name:    "assistant",
		Handler: chatapi.WithSessionID(mux),
		Errors:  chatapi.ErrorWriter(),
		Health:  d.db.Ping,
		OpenAPI: api.Spec("assistant"),
		MaxBody: maxBody,
		// A client that builds its URLs by concatenation sends
		// /api/v1//chat/completions: routed as its clean path, as the
		// provider's nginx front does, instead of a redirect page in HTML.
		Prepare: web.FoldPath,
		// An upload may carry the largest file the service keeps, plus
		// the multipart form around it, and never less than any other
		// request.
		MaxBodyPaths: map[string]int64{"/api/v1/files": max(assistant.DefaultMaxFileBytes+1<<20, maxBody)},
		// The session and client ids tie a request to a conversation and
		// to the owner of the files it reads; neither is a credential.
		LogHeaders: []web.LogHeader{{Header: "X-Session-ID", Key: "session_id"}, {Header: "X-Client-ID", Key: "client_id"}},
	}, sidecars: grpcSidecars, close: func() {
		closeEngines()
		// The requests are over: a bill still kept gets one more try,
		// and stays in the journal for the next start if the database
		// still cannot take it.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		svc.Close(ctx)
		if err := journal.Close(); err != nil {
			d.log.Warn("assistant: bill journal not closed cleanly", "err", err)
		}
	}}, nil
}

// billJournalDir is the directory of the kept-bill journals in the data
// directory.
const billJournalDir = "assistant-bills"

// billedTokens registers partnerapi_assistant_billed_tokens_total, the
// tokens billed by model and contract (prepaid: charged from balances;
// postpaid: usage recorded), what the clients' bills add up to, and
// returns the service's Billed hook that counts them.
func billedTokens(reg prometheus.Registerer, log *slog.Logger) func(model string, prepaid bool, tokens int64) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "partnerapi_assistant_billed_tokens_total",
		Help: "Tokens billed to clients (total_tokens of each answer, cached prompt tokens left out) by model and contract (prepaid, postpaid).",
	}, []string{"model", "contract"})
	if err := reg.Register(c); err != nil {
		log.Warn("assistant: billed-token metrics not registered", "err", err)
	}
	return func(model string, prepaid bool, tokens int64) {
		contract := "postpaid"
		if prepaid {
			contract = "prepaid"
		}
		c.WithLabelValues(model, contract).Add(float64(tokens))
	}
}

// openEngine opens the models directory, creating it when missing so a fresh
// deployment starts and says how to add a model instead of failing.
func openEngine(dir string, opts local.Options) (*local.Engine, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("models directory: %w", err)
	}
	return local.Open(dir, opts)
}

// balanceFlags collects repeated --balance MODEL=TOKENS.
type balanceFlags []assistant.Balance

func (b *balanceFlags) String() string { return "" }
func (b *balanceFlags) Set(v string) error {
	model, n, ok := strings.Cut(v, "=")
	tokens, err := strconv.ParseInt(n, 10, 64)
	if !ok || model == "" || err != nil || tokens < 0 {
		return fmt.Errorf("want MODEL=TOKENS, got %q", v)
	}
	*b = append(*b, assistant.Balance{Model: model, Tokens: tokens})
	return nil
}

// runAssistant is `partnerapi assistant ...`: provisioning commands.
func runAssistant(ctx context.Context, args []string, getenv func(string) string, io stdio) error {
	if len(args) < 2 || args[0] != "client" || args[1] != "create" {
		return errors.New("usage: partnerapi assistant client create --scope ASSISTANT_API_CORP|B2B|PERS [--balance MODEL=TOKENS ...] [--client-id UUID] [--client-secret S]")
	}
	fs := flag.NewFlagSet("assistant client create", flag.ContinueOnError)
	var store storeConfig
	store.register(fs)
	scope := fs.String("scope", "ASSISTANT_API_CORP", "client scope: ASSISTANT_API_PERS, _B2B or _CORP (GIGACHAT_API_* accepted)")
	var balances balanceFlags
	fs.Var(&balances, "balance", "prepaid balance MODEL=TOKENS (repeatable; model by bare name)")
	// A team's CI configuration holds its test client's authorization key
	// as it holds the provider's; these make a fresh server's client match.
	clientID := fs.String("client-id", "", "client id to create, a UUID (default: a new one)")
	clientSecret := fs.String("client-secret", "", "client secret, 32-128 characters of A-Z a-z 0-9 _ - (default: a new one; PARTNERAPI_CLIENT_SECRET keeps it out of the process list)")
	if err := parseFlags(fs, args[2:], getenv); err != nil {
		return err
	}
	sc, ok := assistant.ParseScope(*scope)
	if !ok {
		return fmt.Errorf("--scope: unknown scope %q", *scope)
	}
	if !sc.Prepaid() && len(balances) > 0 {
		return errors.New("--balance: ASSISTANT_API_CORP is postpaid and has no balance")
	}
	if *clientID != "" && !assistant.IsUUID(*clientID) {
		return fmt.Errorf("--client-id %q is not a UUID (the provider's client ids are; e.g. uuidgen)", *clientID)
	}
	if *clientSecret != "" && !assistant.ChosenSecretValid(*clientSecret) {
		return errors.New("--client-secret must be 32-128 characters of A-Z a-z 0-9 _ - (e.g. openssl rand -hex 16)")
	}
	db, err := store.open(ctx)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer db.Close()
	if err := assistantsql.Migrate(ctx, db); err != nil {
		return err
	}
	svc := assistant.NewService(assistantsql.New(db), nil, assistant.Config{})
	creds, err := svc.CreateClientWith(ctx, *clientID, *clientSecret, sc, balances)
	if errors.Is(err, assistant.ErrConflict) {
		return fmt.Errorf("--client-id %s: a client with this id exists", *clientID)
	} else if err != nil {
		return err
	}
	return json.NewEncoder(io.out).Encode(creds)
}

// shellWord is s as one word of a POSIX shell command line: as it is when
// it holds only characters no shell treats specially, else in single
// quotes, each quote inside ending them, escaped with a backslash and
// opening them again.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
