package memory

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Defaults of the Config fields whose zero value means "the default".
const (
	DefaultMaxQueryBytes  = 4 << 10
	DefaultMaxMemoryBytes = 8 << 10
	DefaultQueueSize      = 1000
	DefaultWorkers        = 2
	DefaultEmbedTimeout   = 10 * time.Second
	DefaultMaxAttempts    = 3
	DefaultRetryDelay     = time.Second

	// MaxResults bounds SearchOptions.Limit.
	MaxResults = 100

	// matchBudget bounds the candidates a search scores: the memories
	// holding the rarest terms of the query (see matchTerms).
	matchBudget = 400

	// fuseDepth is how deep each ranking goes into a hybrid search's
	// fusion, and rrfK the constant of reciprocal rank fusion (Cormack,
	// Clarke and Büttcher, SIGIR 2009: 60).
	fuseDepth = 50
	rrfK      = 60
)

// Config configures a [Service]. Every field is optional.
type Config struct {
	// Store keeps the memories. Nil means a new [NewStore], in this
	// process.
	Store Store

	// Embedder, when set, embeds each memory as it is ingested (in the
	// background) and each query, and search is hybrid: the lexical ranking
	// and the ranking by embedding similarity, fused. Nil means lexical
	// search only. See [GeminiEmbedder].
	Embedder Embedder

	// EmbedTimeout bounds the embedding of a query: past it, the search
	// is lexical (and says so). Zero means DefaultEmbedTimeout (10 s).
	EmbedTimeout time.Duration

	// Extraction, when set, has a model read each conversation ingested
	// with IngestThread and write the facts it finds, in the background
	// (see [Extraction]). Nil means none.
	Extraction *Extraction

	// Observer sees searches, ingests, embeddings, extractions and
	// forgetting (see [Observer]).
	Observer Observer

	// Logger receives the failures that do not fail a call: embeddings and
	// extractions that failed, searches that fell back to lexical ranking
	// (Warn). Nil means slog.Default().
	Logger *slog.Logger

	// MaxQueryBytes bounds a query: a longer one is refused with
	// ErrTooLarge. Zero means DefaultMaxQueryBytes (4 KiB).
	MaxQueryBytes int

	// MaxMemoryBytes bounds the text of a memory: a longer fact is refused
	// with ErrTooLarge; a longer message of a conversation is stored cut
	// to it (its start), since refusing it would lose the rest of the
	// conversation. Zero means DefaultMaxMemoryBytes (8 KiB).
	MaxMemoryBytes int

	// QueueSize bounds the background work waiting (embeddings and
	// extractions); more is dropped and reported (an embedding is retried
	// at the user's next ingest). Zero means DefaultQueueSize (1000).
	QueueSize int

	// Workers is how many background jobs run at once. Zero means
	// DefaultWorkers (2).
	Workers int

	// MaxAttempts and RetryDelay say how a failed background job (an
	// embedding, an extraction) is retried: at most MaxAttempts attempts in
	// all, the first retry after RetryDelay, each next one after twice the
	// wait before it. Zero means DefaultMaxAttempts (3) and
	// DefaultRetryDelay (1 s).
	MaxAttempts int
	RetryDelay  time.Duration

	// Now returns the time: of memories ingested without one, and the
	// "now" of recency. Nil means time.Now.
	Now func() time.Time
}

// A Service remembers what users say across conversations, and finds it
// again: see the package documentation. Its methods are safe for
// concurrent use. Close it when done, to end its background work.
type Service struct {
	cfg    Config
	store  Store
	logger *slog.Logger
	now    func() time.Time

	// The background work (embeddings, extractions): a queue, workers, and
	// per user an epoch that ForgetUser advances, so that work started
	// before it writes nothing after it.
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*job
	users   map[string]*userState
	closed  bool
	running int // jobs being run
	wg      sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
}

// userState is the background state of one user.
type userState struct {
	write   sync.Mutex // held while a job or ForgetUser writes the user's memories
	epoch   int
	refs    int                         // jobs queued or running, and calls holding it
	cancels map[*job]context.CancelFunc // of the running jobs
	embed   bool                        // an embedding job is queued
}

// New returns a Service for cfg, and starts its background workers.
func New(cfg Config) (*Service, error) {
	if cfg.MaxQueryBytes < 0 || cfg.MaxMemoryBytes < 0 || cfg.QueueSize < 0 || cfg.Workers < 0 || cfg.EmbedTimeout < 0 ||
		cfg.MaxAttempts < 0 || cfg.RetryDelay < 0 {
		return nil, errors.New("memory: a negative limit in Config")
	}
	if cfg.Extraction != nil {
		x := *cfg.Extraction // the caller's stays as it is
		if err := x.check(); err != nil {
			return nil, err
		}
		cfg.Extraction = &x
	}
	cfg.MaxQueryBytes = orDefault(cfg.MaxQueryBytes, DefaultMaxQueryBytes)
	cfg.MaxMemoryBytes = orDefault(cfg.MaxMemoryBytes, DefaultMaxMemoryBytes)
	cfg.QueueSize = orDefault(cfg.QueueSize, DefaultQueueSize)
	cfg.Workers = orDefault(cfg.Workers, DefaultWorkers)
	cfg.EmbedTimeout = orDefault(cfg.EmbedTimeout, DefaultEmbedTimeout)
	cfg.MaxAttempts = orDefault(cfg.MaxAttempts, DefaultMaxAttempts)
	cfg.RetryDelay = orDefault(cfg.RetryDelay, DefaultRetryDelay)
	s := &Service{cfg: cfg, store: cfg.Store, logger: cfg.Logger, now: cfg.Now, users: map[string]*userState{}}
	if s.store == nil {
		s.store = NewStore()
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.cond = sync.NewCond(&s.mu)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for range cfg.Workers {
		s.wg.Add(1)
		go s.work()
	}
	return s, nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Store returns the service's store.
func (s *Service) Store() Store { return s.store }

// newID returns a new memory id.
func newID() string { return "mem_" + rand.Text() }

func checkUser(user string) error {
	if user == "" {
		return fmt.Errorf("%w: empty user", ErrInvalid)
	}
	if !utf8.ValidString(user) || strings.IndexByte(user, 0) >= 0 {
		return fmt.Errorf("%w: the user is not UTF-8 text without NUL", ErrInvalid)
	}
	return nil
}

// clean returns s as text every store keeps: valid UTF-8, without NUL.
func clean(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}

// cut returns s cut to at most n bytes, at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func (s *Service) observe(ctx context.Context, e *Event) {
	if s.cfg.Observer != nil {
		s.cfg.Observer.ObserveMemory(ctx, e)
	}
}

// Close stops taking background work and waits, until ctx is done, for
// the work queued to finish; then it cancels what is left, and returns
// ctx's error. The store is not closed. Calls after Close fail with
// ErrClosed.
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.cancel()
		return nil
	case <-ctx.Done():
		s.cancel()
		<-done
		return ctx.Err()
	}
}

// Wait returns when the background work queued before it (embeddings,
// extractions) is done, or ctx is.
func (s *Service) Wait(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.queue) > 0 || s.running > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.cond.Wait()
	}
	return nil
}

func (s *Service) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
