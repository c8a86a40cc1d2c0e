/*
 * _ucoll_torch: the torch.distributed backend "ucoll" (c10d::ProcessGroup of
 * libtorch 1.13) on the public ucoll API.
 *
 * Bootstrap. torch hands the creator function a store (a PrefixStore per
 * group); the group's ucoll context is created by ucoll_init_oob with an
 * allgather over that store: round k of this incarnation writes
 * "ucoll/<epoch>/<k>/<rank>" and reads every rank's key; the last rank to
 * have read a round deletes its keys. The epoch comes from a counter in the
 * store, so a group name reused after destroy_process_group() (torch resets
 * its group counter) never reads an earlier incarnation's keys.
 *
 * Threading (as ProcessGroupGloo). ucoll contexts are single-threaded, so
 * each process group has one worker thread that owns its context from
 * ucoll_init_oob to ucoll_finalize. Calls from torch (any thread) check
 * their arguments, build a WorkUcoll holding a "start" function (posts the
 * nonblocking ucoll calls) and a "finish" function (copies out of scratch
 * buffers, divides for AVG), and queue it. The worker takes queued works in
 * order (every rank posts the same collectives in the same order), posts
 * them, keeps them all in flight, progresses and tests their requests, and
 * completes each Work and its Future as soon as its requests are done: a
 * future completes without anybody calling wait() (DDP waits on futures).
 * A ucoll error, an exception of the finish function or the work's timeout
 * becomes the Future's error and the exception of wait().
 *
 * Buffers. What ucoll reads or writes must be a contiguous, dense CPU
 * tensor; list arguments (allgather's outputs, scatter's inputs...) are
 * used in place when they are consecutive views of one storage and go
 * through a flat scratch tensor otherwise (copied with copy_, so those may
 * be non-contiguous). Data movement uses UCOLL_BYTE and byte counts, which
 * serves every dtype; reductions use the dtype's ucoll type.
 *
 * Shutdown. The destructor stops the worker: it posts what is still queued,
 * waits for everything in flight (works that timed out excepted: finalize
 * cancels their requests), then calls ucoll_finalize, whose one allgather
 * goes through the store (kept alive by the bootstrap state) with a timeout
 * of min(group timeout, 60 s): a rank whose peers never destroy the group
 * warns and finishes instead of hanging.
 */
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <torch/csrc/utils/pybind.h>

#include <ATen/core/ivalue.h>
#include <pybind11/chrono.h>

#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <ucoll.h>

namespace ucoll_torch
{

using c10d::OpType;
using c10d::ReduceOp;
using Clock = std::chrono::steady_clock;

constexpr const char *kBackendName = "ucoll";
constexpr auto kFinalizeTimeoutCap = std::chrono::milliseconds(60 * 1000);

/* ---- bootstrap over the c10d store ------------------------------------- */

/*
 * The argument of the OOB allgather. Owned by the process group and alive
 * until its worker has returned from ucoll_finalize; the store reference
 * keeps the store alive as long.
 */
struct StoreOob {
    c10::intrusive_ptr<c10d::Store> store;
    int rank = 0;
    int size = 0;
    std::string prefix; /* "ucoll/<epoch>/" */
    uint64_t round = 0;
    std::chrono::milliseconds timeout{0};
    std::string error; /* why the last allgather failed */
};

static int store_allgather(void *arg, const void *in, void *out, size_t len)
{
    auto *s = static_cast<StoreOob *>(arg);
    const std::string base = s->prefix + std::to_string(s->round++) + "/";
    try {
        const auto *p = static_cast<const uint8_t *>(in);
        std::vector<std::string> keys;
        keys.reserve(s->size);
        for (int r = 0; r < s->size; ++r) {
            keys.push_back(base + std::to_string(r));
        }
        s->store->set(keys[s->rank], std::vector<uint8_t>(p, p + len));
        s->store->wait(keys, s->timeout);
        for (int r = 0; r < s->size; ++r) {
            std::vector<uint8_t> v =
                r == s->rank ? std::vector<uint8_t>(p, p + len) : s->store->get(keys[r]);
            if (v.size() != len) {
                s->error = "store key " + keys[r] + " holds " + std::to_string(v.size()) +
                           " bytes, expected " + std::to_string(len);
                return -1;
            }
            if (len) {
                std::memcpy(static_cast<uint8_t *>(out) + (size_t)r * len, v.data(), len);
            }
        }
        /* the last reader removes the round; a store without deleteKey
         * (FileStore) keeps the keys, which are never read again */
        if (s->store->add(base + "done", 1) == s->size) {
            try {
                for (const auto &k : keys) {
                    s->store->deleteKey(k);
                }
                s->store->deleteKey(base + "done");
            } catch (const std::exception &) {
            }
        }
    } catch (const std::exception &e) {
        s->error = std::string("store allgather round ") + base + ": " + e.what();
        return -1;
    }
    return 0;
}

/* ---- datatypes and operators ------------------------------------------- */

struct UType {
    ucoll_dtype_t dt;
    size_t mult; /* ucoll elements per tensor element (2 for complex) */
};

static bool utype_of(at::ScalarType t, UType *out)
{
    switch (t) {
    case at::kFloat: *out = {UCOLL_FLOAT32, 1}; return true;
    case at::kDouble: *out = {UCOLL_FLOAT64, 1}; return true;
    case at::kHalf: *out = {UCOLL_FLOAT16, 1}; return true;
    case at::kBFloat16: *out = {UCOLL_BFLOAT16, 1}; return true;
    case at::kComplexFloat: *out = {UCOLL_FLOAT32, 2}; return true;
    case at::kComplexDouble: *out = {UCOLL_FLOAT64, 2}; return true;
    case at::kChar: *out = {UCOLL_INT8, 1}; return true;
    case at::kByte: *out = {UCOLL_UINT8, 1}; return true;
    case at::kShort: *out = {UCOLL_INT16, 1}; return true;
    case at::kInt: *out = {UCOLL_INT32, 1}; return true;
    case at::kLong: *out = {UCOLL_INT64, 1}; return true;
    case at::kBool: *out = {UCOLL_UINT8, 1}; return true;
    default: return false;
    }
}

static const char *redop_name(ReduceOp::RedOpType op)
{
    switch (op) {
    case ReduceOp::SUM: return "SUM";
    case ReduceOp::AVG: return "AVG";
    case ReduceOp::PRODUCT: return "PRODUCT";
    case ReduceOp::MIN: return "MIN";
    case ReduceOp::MAX: return "MAX";
    case ReduceOp::BAND: return "BAND";
    case ReduceOp::BOR: return "BOR";
    case ReduceOp::BXOR: return "BXOR";
    case ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return "?";
    }
}

/* How a reduction runs: ucoll type and op, and whether to divide by the
 * group size afterwards (AVG). Throws for what ucoll cannot do. */
struct Reduction {
    UType ut;
    ucoll_op_t op;
    bool avg;
};

static Reduction reduction_of(const char *call, const ReduceOp &rop, at::ScalarType t)
{
    const ReduceOp::RedOpType op = rop.op_;
    Reduction r{};
    TORCH_CHECK(utype_of(t, &r.ut), "ucoll ", call, ": dtype ", t, " is not supported");
    TORCH_CHECK(op != ReduceOp::PREMUL_SUM, "ucoll ", call,
                ": ReduceOp.PREMUL_SUM is not supported (NCCL only)");
    const bool is_float = at::isFloatingType(t);
    if (t == at::kBool) {
        /* as NCCL: sum and max are "or", product and min are "and" */
        switch (op) {
        case ReduceOp::SUM:
        case ReduceOp::MAX: r.op = UCOLL_LOR; return r;
        case ReduceOp::PRODUCT:
        case ReduceOp::MIN: r.op = UCOLL_LAND; return r;
        case ReduceOp::BAND: r.op = UCOLL_BAND; return r;
        case ReduceOp::BOR: r.op = UCOLL_BOR; return r;
        case ReduceOp::BXOR: r.op = UCOLL_BXOR; return r;
        default:
            TORCH_CHECK(false, "ucoll ", call, ": ReduceOp.", redop_name(op),
                        " does not apply to bool tensors");
        }
    }
    if (at::isComplexType(t)) {
        TORCH_CHECK(op == ReduceOp::SUM || op == ReduceOp::AVG, "ucoll ", call,
                    ": complex tensors support SUM and AVG only, not ", redop_name(op));
    }
    switch (op) {
    case ReduceOp::SUM: r.op = UCOLL_SUM; return r;
    case ReduceOp::AVG:
        r.op = UCOLL_SUM;
        r.avg = true;
        return r;
    case ReduceOp::PRODUCT: r.op = UCOLL_PROD; return r;
    case ReduceOp::MIN: r.op = UCOLL_MIN; return r;
    case ReduceOp::MAX: r.op = UCOLL_MAX; return r;
    case ReduceOp::BAND:
    case ReduceOp::BOR:
    case ReduceOp::BXOR:
        TORCH_CHECK(!is_float, "ucoll ", call, ": ReduceOp.", redop_name(op),
                    " needs an integer or bool dtype, not ", t);
        r.op = op == ReduceOp::BAND ? UCOLL_BAND : op == ReduceOp::BOR ? UCOLL_BOR : UCOLL_BXOR;
        return r;
    default: TORCH_CHECK(false, "ucoll ", call, ": unknown ReduceOp ", (int)op);
    }
    return r;
}

/* Divide by n for AVG: true division for floating and complex types,
 * truncation for integers (NCCL's integer average). */
static void divide_avg(at::Tensor &t, int n)
{
    if (at::isFloatingType(t.scalar_type()) || at::isComplexType(t.scalar_type())) {
        t.div_(n);
    } else {
        t.div_(n, "trunc");
    }
}

/* ---- argument checks ---------------------------------------------------- */

static void check_cpu(const char *call, const at::Tensor &t)
{
    TORCH_CHECK(t.defined(), "ucoll ", call, ": undefined tensor");
    TORCH_CHECK(t.device().is_cpu(), "ucoll ", call,
                ": only CPU tensors are supported, got a tensor on ", t.device());
    TORCH_CHECK(t.layout() == at::kStrided, "ucoll ", call,
                ": only dense (strided) tensors are supported, got layout ", t.layout());
    TORCH_CHECK(
        !t.is_conj() && !t.is_neg(), "ucoll ", call,
        ": tensor has a pending conjugate/negative view; call resolve_conj()/resolve_neg()");
}

/* A tensor whose memory ucoll reads or writes directly. */
static void check_direct(const char *call, const at::Tensor &t)
{
    check_cpu(call, t);
    TORCH_CHECK(t.is_contiguous(), "ucoll ", call,
                ": tensor must be contiguous (non-contiguous tensors are not "
                "supported; pass t.contiguous() and copy back)");
}

static at::Tensor &single(const char *call, std::vector<at::Tensor> &ts)
{
    TORCH_CHECK(ts.size() == 1, "ucoll ", call, ": expects exactly one tensor per process, got ",
                ts.size());
    check_direct(call, ts[0]);
    return ts[0];
}

static size_t nbytes(const at::Tensor &t)
{
    return (size_t)t.numel() * t.element_size();
}

/* ucoll may reject NULL buffers even for zero bytes. */
static void *ptr(const at::Tensor &t)
{
    static uint64_t dummy;
    void *p = t.data_ptr();
    return p != nullptr ? p : &dummy;
}

/* True when ts are contiguous and lie back to back in one storage, each
 * bytes long: then ts[0]'s address serves as one flat buffer. */
static bool packed(const std::vector<at::Tensor> &ts, size_t bytes)
{
    if (ts.empty()) {
        return false;
    }
    const char *base = static_cast<const char *>(ts[0].data_ptr());
    for (size_t i = 0; i < ts.size(); ++i) {
        if (!ts[i].is_contiguous() || !ts[i].storage().is_alias_of(ts[0].storage()) ||
            static_cast<const char *>(ts[i].data_ptr()) != base + i * bytes) {
            return false;
        }
    }
    return true;
}

/* Every tensor of a list: CPU, dense, of dtype and numel as ref. */
static void check_list(const char *call, const char *what, const std::vector<at::Tensor> &ts,
                       size_t n, const at::Tensor &ref)
{
    TORCH_CHECK(ts.size() == n, "ucoll ", call, ": ", what, " must hold ", n,
                " tensors (one per rank), got ", ts.size());
    for (const auto &t : ts) {
        check_cpu(call, t);
        TORCH_CHECK(t.scalar_type() == ref.scalar_type(), "ucoll ", call, ": ", what, " has dtype ",
                    t.scalar_type(), ", expected ", ref.scalar_type());
        TORCH_CHECK(t.numel() == ref.numel(), "ucoll ", call, ": ", what, " has a tensor of ",
                    t.numel(), " elements, expected ", ref.numel());
    }
}

/* One flat contiguous tensor with the contents of ts, in order. */
static at::Tensor flatten(const std::vector<at::Tensor> &ts, size_t each_bytes)
{
    if (packed(ts, each_bytes)) {
        return ts[0].new_empty({0}).set_(ts[0].storage(), ts[0].storage_offset(),
                                         {(int64_t)ts.size() * ts[0].numel()}, {1});
    }
    std::vector<at::Tensor> flat;
    flat.reserve(ts.size());
    for (const auto &t : ts) {
        flat.push_back(t.reshape({-1}));
    }
    return at::cat(flat);
}

/* ---- work --------------------------------------------------------------- */

using Outputs = std::vector<std::vector<at::Tensor>>;

/*
 * One call of the process group. Created by the calling thread, owned
 * through intrusive_ptr by the caller, the queue and the worker's list of
 * works in flight; everything its requests read or write is referenced by
 * its start and finish functions (captured tensors) until they complete.
 */
class WorkUcoll : public c10d::Work
{
  public:
    using StartFn = std::function<int(ucoll_comm_t *, std::vector<ucoll_req_t *> &)>;
    using FinishFn = std::function<void()>;

    WorkUcoll(int rank, OpType type, const char *call, Outputs outputs, StartFn start,
              FinishFn finish, Clock::time_point deadline)
        : Work(rank, type), call_(call), outputs_(std::move(outputs)), start_(std::move(start)),
          finish_(std::move(finish)), deadline_(deadline),
          future_(c10::make_intrusive<at::ivalue::Future>(
              outputs_.size() > 1 ? c10::ListType::create(c10::ListType::ofTensors())
                                  : c10::ListType::ofTensors()))
    {
    }

    std::vector<at::Tensor> result() override
    {
        TORCH_CHECK(isCompleted(), "ucoll ", call_, ": result() before the work completed");
        if (exception_) {
            std::rethrow_exception(exception_);
        }
        return outputs_.empty() ? std::vector<at::Tensor>() : outputs_[0];
    }

    c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

    int sourceRank() const override
    {
        TORCH_CHECK(source_ >= 0, "ucoll ", call_,
                    ": sourceRank() is known for receives only, "
                    "after they completed");
        return source_;
    }

    /* ---- worker side ---- */

    const char *call_;
    Outputs outputs_;
    StartFn start_;
    FinishFn finish_;
    Clock::time_point deadline_;
    std::vector<ucoll_req_t *> reqs_;
    int error_ = UCOLL_OK;
    std::atomic<int> source_{-1};
    bool anysource_ = false;
    bool abandoned_ = false; /* completed with an error while requests still run */

    /* Work first, then the future: a callback of the future (run here, on
     * the worker thread) may wait() on this work. A callback that throws
     * must not end the worker. */
    void complete_ok()
    {
        release();
        finish();
        try {
            if (outputs_.empty()) {
                future_->markCompleted(c10::IValue(std::vector<at::Tensor>()));
            } else if (outputs_.size() > 1) {
                future_->markCompleted(c10::IValue(outputs_));
            } else {
                future_->markCompleted(c10::IValue(outputs_[0]));
            }
        } catch (const std::exception &e) {
            std::fprintf(stderr, "ucoll torch backend: %s: a future callback threw: %s\n", call_,
                         e.what());
        }
    }

    void complete_error(const std::string &msg)
    {
        if (abandoned_) {
            return;
        }
        auto eptr = std::make_exception_ptr(std::runtime_error(msg));
        finish(eptr);
        try {
            future_->setError(eptr);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "ucoll torch backend: %s: a future callback threw: %s\n", call_,
                         e.what());
        }
    }

    /* drop the buffers' references once nothing reads them any more */
    void release()
    {
        start_ = nullptr;
        finish_ = nullptr;
    }

  private:
    c10::intrusive_ptr<at::ivalue::Future> future_;
};

/* ---- worker ------------------------------------------------------------- */

/*
 * The worker of one process group: its ucoll context, the queue of works
 * and the thread that owns both. Shared by the process group and the
 * thread, so that a group whose last reference goes away on the worker
 * thread itself (in a future callback) can let the thread finish alone.
 */
class Worker
{
  public:
    Worker(const c10::intrusive_ptr<c10d::Store> &store, int rank, int size,
           std::chrono::milliseconds timeout)
        : timeout_(timeout), rank_(rank)
    {
        oob_.store = store;
        oob_.rank = rank;
        oob_.size = size;
        oob_.timeout = timeout;
        /* every incarnation of a group name gets its own keys */
        const int64_t n = store->add("ucoll/epoch", 1);
        oob_.prefix = "ucoll/" + std::to_string((n - 1) / size) + "/";
    }

    /* after the thread started: UCOLL_OK once the context is up, or why not */
    int wait_init(std::string *why)
    {
        std::unique_lock<std::mutex> lk(mu_);
        cv_init_.wait(lk, [this] { return init_done_; });
        *why = oob_.error;
        return init_status_;
    }

    void submit(const c10::intrusive_ptr<WorkUcoll> &w)
    {
        {
            std::lock_guard<std::mutex> lk(mu_);
            TORCH_CHECK(!stop_, "ucoll ", w->call_, ": the process group is shutting down");
            queue_.push_back(w);
            pending_.store(true, std::memory_order_release);
        }
        cv_.notify_one();
    }

    /* the thread drains the queue, finalizes the context and returns */
    void stop()
    {
        {
            std::lock_guard<std::mutex> lk(mu_);
            stop_ = true;
            pending_.store(true, std::memory_order_release);
        }
        cv_.notify_all();
    }

    /* the thread's body: ucoll_init_oob, the loop, ucoll_finalize */
    void run();

  private:
    static std::string error_text(const WorkUcoll &w, int status)
    {
        return std::string("ucoll ") + w.call_ + ": " + ucoll_strerror(status) + " (" +
               std::to_string(status) + ")";
    }

    /* post w's calls; false when it is already complete (failed to start) */
    static bool start(WorkUcoll &w, ucoll_comm_t *comm)
    {
        int st;
        try {
            st = w.start_(comm, w.reqs_);
        } catch (const std::exception &e) {
            st = UCOLL_ERR_ARG;
            w.complete_error(std::string("ucoll ") + w.call_ + ": " + e.what());
            w.abandoned_ = true;
        }
        if (st != UCOLL_OK) {
            w.error_ = st;
        }
        if (w.reqs_.empty()) {
            finish_work(w);
            return false;
        }
        return true;
    }

    /* test w's requests; true when all are done and w is completed */
    static bool poll(WorkUcoll &w)
    {
        bool all = true;
        for (auto &req : w.reqs_) {
            if (req == nullptr) {
                continue;
            }
            int done = 0;
            ucoll_status_t status{};
            const int st = ucoll_test(req, &done, &status);
            if (!done && st == UCOLL_OK) {
                all = false;
                continue;
            }
            req = nullptr; /* done (and freed), or an error that will not complete it */
            if (st != UCOLL_OK && w.error_ == UCOLL_OK) {
                w.error_ = st;
            }
            if (w.anysource_ && st == UCOLL_OK) {
                w.source_ = status.source;
            }
        }
        if (all) {
            finish_work(w);
        }
        return all;
    }

    static void finish_work(WorkUcoll &w)
    {
        if (w.error_ != UCOLL_OK) {
            w.complete_error(error_text(w, w.error_));
            w.release();
            return;
        }
        if (w.abandoned_) {
            w.release();
            return;
        }
        try {
            if (w.finish_) {
                w.finish_();
            }
        } catch (const std::exception &e) {
            w.complete_error(std::string("ucoll ") + w.call_ + ": " + e.what());
            w.release();
            return;
        }
        w.complete_ok();
    }

    static bool all_abandoned(const std::vector<c10::intrusive_ptr<WorkUcoll>> &active)
    {
        for (const auto &w : active) {
            if (!w->abandoned_) {
                return false;
            }
        }
        return true;
    }

    /* works past their deadline fail now; their requests stay in flight
     * (the buffers stay referenced) until ucoll completes them */
    static void expire(std::vector<c10::intrusive_ptr<WorkUcoll>> &active)
    {
        const auto now = Clock::now();
        for (auto &w : active) {
            if (!w->abandoned_ && now > w->deadline_) {
                w->complete_error(std::string("ucoll ") + w->call_ +
                                  ": timed out (process group timeout or the call's timeout); "
                                  "a peer may not have made the matching call");
                w->abandoned_ = true;
            }
        }
    }

    StoreOob oob_; /* the bootstrap's state, alive until ucoll_finalize returned */
    std::chrono::milliseconds timeout_;
    int rank_;
    ucoll_ctx_t *ctx_ = nullptr;   /* the worker thread's only */
    ucoll_comm_t *comm_ = nullptr; /* its world */

    std::mutex mu_;
    std::condition_variable cv_;      /* queue_ or stop_ changed */
    std::condition_variable cv_init_; /* init_done_ */
    std::deque<c10::intrusive_ptr<WorkUcoll>> queue_;
    std::atomic<bool> pending_{false};
    bool stop_ = false;
    bool init_done_ = false;
    int init_status_ = UCOLL_OK;
};

void Worker::run()
{
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* short naps really are short */
    ucoll_oob_t oob{};
    oob.rank = oob_.rank;
    oob.size = oob_.size;
    oob.allgather = store_allgather;
    oob.arg = &oob_;
    oob.node_id = -1;
    {
        int st = ucoll_init_oob(&oob, &ctx_);
        std::lock_guard<std::mutex> lk(mu_);
        init_status_ = st;
        init_done_ = true;
        if (st == UCOLL_OK) {
            comm_ = ucoll_comm_world(ctx_);
        }
    }
    cv_init_.notify_all();
    if (init_status_ != UCOLL_OK) {
        return;
    }

    std::vector<c10::intrusive_ptr<WorkUcoll>> active;
    std::deque<c10::intrusive_ptr<WorkUcoll>> incoming;
    unsigned idle = 0;
    unsigned long iter = 0;
    for (;;) {
        if (active.empty() || pending_.load(std::memory_order_acquire)) {
            std::unique_lock<std::mutex> lk(mu_);
            if (active.empty()) {
                cv_.wait(lk, [this] { return stop_ || !queue_.empty(); });
            }
            /* what is left at shutdown has failed already (timed out):
             * ucoll_finalize cancels its requests */
            if (stop_ && queue_.empty() && all_abandoned(active)) {
                break;
            }
            incoming.swap(queue_);
            pending_.store(stop_, std::memory_order_relaxed);
        }
        for (auto &w : incoming) {
            if (start(*w, comm_)) {
                active.push_back(std::move(w));
            }
        }
        incoming.clear();
        if (active.empty()) {
            continue;
        }

        const int n = ucoll_progress(ctx_);
        bool moved = n > 0;
        size_t keep = 0;
        for (size_t i = 0; i < active.size(); ++i) {
            if (poll(*active[i])) {
                moved = true;
            } else {
                active[keep++] = std::move(active[i]);
            }
        }
        active.resize(keep);

        if ((++iter & 1023) == 0) {
            expire(active);
        }
        /* nothing moved: poll on, then give the core away between polls,
         * then (after some 20000 idle polls) poll every ~20 us. No sleep on
         * the UCX event fd: the public API has none, and the worker must
         * also see newly queued works. */
        if (moved) {
            idle = 0;
        } else if (++idle > 20000) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, nullptr);
        } else if (idle > 64) {
            sched_yield();
        }
    }

    oob_.timeout = std::min<std::chrono::milliseconds>(
        timeout_.count() > 0 ? timeout_ : kFinalizeTimeoutCap, kFinalizeTimeoutCap);
    const int st = ucoll_finalize(ctx_);
    if (st != UCOLL_OK) {
        std::fprintf(stderr, "ucoll torch backend: rank %d: ucoll_finalize: %s%s%s\n", rank_,
                     ucoll_strerror(st), oob_.error.empty() ? "" : ": ", oob_.error.c_str());
    }
    ctx_ = nullptr;
    for (auto &w : active) {
        w->reqs_.clear(); /* freed by ucoll_finalize */
        w->release();
    }
}

/* ---- process group ------------------------------------------------------ */

class ProcessGroupUcoll : public c10d::ProcessGroup
{
  public:
    ProcessGroupUcoll(const c10::intrusive_ptr<c10d::Store> &store, int rank, int size,
                      std::chrono::milliseconds timeout)
        : ProcessGroup(rank, size), timeout_(timeout)
    {
        TORCH_CHECK(size >= 1 && rank >= 0 && rank < size, "ucoll: bad rank ", rank, " for size ",
                    size);
        worker_ = std::make_shared<Worker>(store, rank, size, timeout);
        thread_ = std::thread([w = worker_] { w->run(); });
        std::string why;
        const int st = worker_->wait_init(&why);
        if (st != UCOLL_OK) {
            thread_.join();
            TORCH_CHECK(false, "ucoll: ucoll_init_oob failed for rank ", rank, " of ", size, ": ",
                        ucoll_strerror(st), why.empty() ? "" : " (" + why + ")");
        }
        init();
    }

    ~ProcessGroupUcoll() override
    {
        worker_->stop();
        if (std::this_thread::get_id() == thread_.get_id()) {
            /* the last reference went in a future callback, on the worker
             * thread itself: it finishes and finalizes on its own */
            thread_.detach();
            return;
        }
        /* a Python callback on a draining future needs the GIL */
        if (Py_IsInitialized() && PyGILState_Check()) {
            pybind11::gil_scoped_release nogil;
            thread_.join();
        } else {
            thread_.join();
        }
    }

    const std::string getBackendName() const override { return kBackendName; }

    /* ---- collectives ---- */

    c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor> &tensors,
                                             const c10d::BroadcastOptions &opts) override
    {
        const char *call = "broadcast";
        TORCH_CHECK(!tensors.empty(), "ucoll ", call, ": no tensors");
        if (tensors.size() > 1) {
            return broadcast_coalesced(call, tensors, opts);
        }
        at::Tensor t = single(call, tensors);
        check_root(call, opts.rootRank);
        TORCH_CHECK(opts.rootTensor == 0, "ucoll ", call, ": rootTensor must be 0");
        const int root = (int)opts.rootRank;
        return enqueue(OpType::BROADCAST, call, {{t}}, opts.timeout,
                       [t, root](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                           return post(
                               r, ucoll_ibcast(ptr(t), nbytes(t), UCOLL_BYTE, root, c, slot(r)));
                       });
    }

    /* Several CPU tensors (there is one device here, so no multi-device
     * meaning to keep): their bytes, in order, as one message, without
     * flattening them (ucoll_ibcast_iov: straight through shared memory,
     * packed inside the library elsewhere). The total must match on every
     * rank; dtypes and shapes may differ. */
    c10::intrusive_ptr<c10d::Work> broadcast_coalesced(const char *call,
                                                       std::vector<at::Tensor> &tensors,
                                                       const c10d::BroadcastOptions &opts)
    {
        for (auto &t : tensors) {
            check_direct(call, t);
        }
        check_root(call, opts.rootRank);
        TORCH_CHECK(opts.rootTensor == 0, "ucoll ", call, ": rootTensor must be 0");
        const int root = (int)opts.rootRank;
        std::vector<at::Tensor> ts = tensors;
        return enqueue(OpType::BROADCAST, call, {ts}, opts.timeout,
                       [ts, root](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                           std::vector<ucoll_iov_t> iov(ts.size());
                           for (size_t i = 0; i < ts.size(); i++) {
                               iov[i].buf = ptr(ts[i]);
                               iov[i].len = nbytes(ts[i]);
                           }
                           return post(r, ucoll_ibcast_iov(iov.data(), iov.size(), root, c,
                                                           slot(r)));
                       });
    }

    c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor> &tensors,
                                             const c10d::AllreduceOptions &opts) override
    {
        const char *call = "allreduce";
        at::Tensor t = single(call, tensors);
        return allreduce_list(call, OpType::ALLREDUCE, {t}, opts.reduceOp, opts.timeout);
    }

    c10::intrusive_ptr<c10d::Work>
    allreduce_coalesced(std::vector<at::Tensor> &tensors,
                        const c10d::AllreduceCoalescedOptions &opts) override
    {
        const char *call = "allreduce_coalesced";
        TORCH_CHECK(!tensors.empty(), "ucoll ", call, ": no tensors");
        for (auto &t : tensors) {
            check_direct(call, t);
        }
        return allreduce_list(call, OpType::ALLREDUCE_COALESCED, tensors, opts.reduceOp,
                              opts.timeout);
    }

    c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor> &tensors,
                                          const c10d::ReduceOptions &opts) override
    {
        const char *call = "reduce";
        at::Tensor t = single(call, tensors);
        check_root(call, opts.rootRank);
        TORCH_CHECK(opts.rootTensor == 0, "ucoll ", call, ": rootTensor must be 0");
        const Reduction red = reduction_of(call, opts.reduceOp, t.scalar_type());
        const int root = (int)opts.rootRank;
        const bool is_root = root == rank_;
        const int p = size_;
        const size_t count = (size_t)t.numel() * red.ut.mult;
        FinishFn fin;
        if (red.avg && is_root) {
            fin = [t, p]() mutable { divide_avg(t, p); };
        }
        return enqueue(
            OpType::REDUCE, call, {{t}}, opts.timeout,
            [t, red, root, is_root, count](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                /* the root reduces in place; the others' rbuf is unused */
                const void *s = is_root ? UCOLL_IN_PLACE : ptr(t);
                void *d = is_root ? ptr(t) : nullptr;
                return post(r, ucoll_ireduce(s, d, count, red.ut.dt, red.op, root, c, slot(r)));
            },
            std::move(fin));
    }

    c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>> &outputs,
                                             std::vector<at::Tensor> &inputs,
                                             const c10d::AllgatherOptions &opts) override
    {
        const char *call = "allgather";
        at::Tensor in = single(call, inputs);
        TORCH_CHECK(outputs.size() == 1, "ucoll ", call,
                    ": expects one list of output tensors, got ", outputs.size());
        std::vector<at::Tensor> outs = outputs[0];
        check_list(call, "output list", outs, size_, in);
        const size_t n = nbytes(in);
        at::Tensor flat;
        FinishFn fin;
        if (packed(outs, n)) {
            flat = outs[0];
        } else {
            flat = at::empty({(int64_t)size_ * in.numel()}, in.options());
            fin = [flat, outs]() mutable { unflatten(flat, outs); };
        }
        return enqueue(
            OpType::ALLGATHER, call, {outs}, opts.timeout,
            [in, flat, n](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                return post(r, ucoll_iallgather(ptr(in), ptr(flat), n, UCOLL_BYTE, c, slot(r)));
            },
            std::move(fin));
    }

    c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor &output, at::Tensor &input,
                                                   const c10d::AllgatherOptions &opts) override
    {
        const char *call = "_allgather_base";
        check_direct(call, input);
        check_direct(call, output);
        TORCH_CHECK(output.scalar_type() == input.scalar_type(), "ucoll ", call, ": output dtype ",
                    output.scalar_type(), " differs from input dtype ", input.scalar_type());
        TORCH_CHECK(output.numel() == input.numel() * size_, "ucoll ", call,
                    ": output must hold size * input.numel() = ", input.numel() * size_,
                    " elements, has ", output.numel());
        at::Tensor in = input, out = output;
        const size_t n = nbytes(in);
        return enqueue(OpType::_ALLGATHER_BASE, call, {{out}}, opts.timeout,
                       [in, out, n](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                           return post(
                               r, ucoll_iallgather(ptr(in), ptr(out), n, UCOLL_BYTE, c, slot(r)));
                       });
    }

    c10::intrusive_ptr<c10d::Work>
    allgather_coalesced(std::vector<std::vector<at::Tensor>> &output_lists,
                        std::vector<at::Tensor> &inputs,
                        const c10d::AllgatherOptions &opts) override
    {
        const char *call = "allgather_coalesced";
        TORCH_CHECK(!inputs.empty(), "ucoll ", call, ": no input tensors");
        TORCH_CHECK(output_lists.size() == (size_t)size_, "ucoll ", call,
                    ": expects one output list per rank (", size_, "), got ", output_lists.size());
        std::vector<at::Tensor> flat_in;
        for (auto &t : inputs) {
            check_cpu(call, t);
            TORCH_CHECK(t.scalar_type() == inputs[0].scalar_type(), "ucoll ", call,
                        ": input tensors must share one dtype");
            flat_in.push_back(t.reshape({-1}));
        }
        for (auto &l : output_lists) {
            TORCH_CHECK(l.size() == inputs.size(), "ucoll ", call, ": every output list must hold ",
                        inputs.size(), " tensors");
            for (size_t j = 0; j < l.size(); ++j) {
                check_cpu(call, l[j]);
                TORCH_CHECK(l[j].scalar_type() == inputs[j].scalar_type() &&
                                l[j].numel() == inputs[j].numel(),
                            "ucoll ", call, ": output tensor ", j, " differs from input tensor ", j,
                            " in dtype or size");
            }
        }
        at::Tensor in = at::cat(flat_in);
        at::Tensor flat = at::empty({(int64_t)size_ * in.numel()}, in.options());
        std::vector<at::Tensor> outs;
        for (auto &l : output_lists) {
            outs.insert(outs.end(), l.begin(), l.end());
        }
        const size_t n = nbytes(in);
        return enqueue(
            OpType::ALLGATHER_COALESCED, call, output_lists, opts.timeout,
            [in, flat, n](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                return post(r, ucoll_iallgather(ptr(in), ptr(flat), n, UCOLL_BYTE, c, slot(r)));
            },
            [flat, outs]() mutable { unflatten(flat, outs); });
    }

    c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>> &outputs,
                                          std::vector<at::Tensor> &inputs,
                                          const c10d::GatherOptions &opts) override
    {
        const char *call = "gather";
        at::Tensor in = single(call, inputs);
        check_root(call, opts.rootRank);
        const int root = (int)opts.rootRank;
        const size_t n = nbytes(in);
        at::Tensor flat;
        FinishFn fin;
        Outputs result;
        if (rank_ == root) {
            TORCH_CHECK(outputs.size() == 1, "ucoll ", call,
                        ": the root expects one list of output tensors, got ", outputs.size());
            std::vector<at::Tensor> outs = outputs[0];
            check_list(call, "output list", outs, size_, in);
            if (packed(outs, n)) {
                flat = outs[0];
            } else {
                flat = at::empty({(int64_t)size_ * in.numel()}, in.options());
                fin = [flat, outs]() mutable { unflatten(flat, outs); };
            }
            result = {outs};
        } else {
            TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()), "ucoll ",
                        call, ": output tensors are only given on the root");
        }
        return enqueue(
            OpType::GATHER, call, result, opts.timeout,
            [in, flat, n, root](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                void *d = flat.defined() ? ptr(flat) : nullptr;
                return post(r, ucoll_igather(ptr(in), d, n, UCOLL_BYTE, root, c, slot(r)));
            },
            std::move(fin));
    }

    c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor> &outputs,
                                           std::vector<std::vector<at::Tensor>> &inputs,
                                           const c10d::ScatterOptions &opts) override
    {
        const char *call = "scatter";
        at::Tensor out = single(call, outputs);
        check_root(call, opts.rootRank);
        const int root = (int)opts.rootRank;
        const size_t n = nbytes(out);
        at::Tensor flat;
        if (rank_ == root) {
            TORCH_CHECK(inputs.size() == 1, "ucoll ", call,
                        ": the root expects one list of input tensors, got ", inputs.size());
            check_list(call, "input list", inputs[0], size_, out);
            flat = flatten(inputs[0], n);
        } else {
            TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()), "ucoll ", call,
                        ": input tensors are only given on the root");
        }
        return enqueue(OpType::SCATTER, call, {{out}}, opts.timeout,
                       [out, flat, n, root](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                           const void *s = flat.defined() ? ptr(flat) : nullptr;
                           return post(
                               r, ucoll_iscatter(s, ptr(out), n, UCOLL_BYTE, root, c, slot(r)));
                       });
    }

    c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor> &outputs,
                                                  std::vector<std::vector<at::Tensor>> &inputs,
                                                  const c10d::ReduceScatterOptions &opts) override
    {
        const char *call = "reduce_scatter";
        at::Tensor out = single(call, outputs);
        TORCH_CHECK(inputs.size() == 1, "ucoll ", call, ": expects one list of input tensors, got ",
                    inputs.size());
        check_list(call, "input list", inputs[0], size_, out);
        at::Tensor flat = flatten(inputs[0], nbytes(out));
        return reduce_scatter_flat(call, OpType::REDUCE_SCATTER, out, flat, opts);
    }

    c10::intrusive_ptr<c10d::Work>
    _reduce_scatter_base(at::Tensor &output, at::Tensor &input,
                         const c10d::ReduceScatterOptions &opts) override
    {
        const char *call = "_reduce_scatter_base";
        check_direct(call, output);
        check_direct(call, input);
        TORCH_CHECK(output.scalar_type() == input.scalar_type(), "ucoll ", call, ": output dtype ",
                    output.scalar_type(), " differs from input dtype ", input.scalar_type());
        TORCH_CHECK(input.numel() == output.numel() * size_, "ucoll ", call,
                    ": input must hold size * output.numel() = ", output.numel() * size_,
                    " elements, has ", input.numel());
        return reduce_scatter_flat(call, OpType::_REDUCE_SCATTER_BASE, output, input, opts);
    }

    c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor &output, at::Tensor &input,
                                                 std::vector<int64_t> &out_splits,
                                                 std::vector<int64_t> &in_splits,
                                                 const c10d::AllToAllOptions &opts) override
    {
        const char *call = "alltoall_base";
        check_direct(call, output);
        check_direct(call, input);
        TORCH_CHECK(output.scalar_type() == input.scalar_type(), "ucoll ", call, ": output dtype ",
                    output.scalar_type(), " differs from input dtype ", input.scalar_type());
        at::Tensor in = input, out = output;
        if (out_splits.empty() && in_splits.empty()) {
            TORCH_CHECK(in.numel() == out.numel(), "ucoll ", call,
                        ": input and output must have the same number of elements without "
                        "split sizes");
            TORCH_CHECK(in.dim() > 0 && in.size(0) % size_ == 0, "ucoll ", call,
                        ": dimension 0 of the input (", in.dim() ? in.size(0) : 0,
                        ") must divide by the group size ", size_);
            const size_t n = nbytes(in) / size_;
            return enqueue(
                OpType::ALLTOALL_BASE, call, {{out}}, opts.timeout,
                [in, out, n](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                    return post(r, ucoll_ialltoall(ptr(in), ptr(out), n, UCOLL_BYTE, c, slot(r)));
                });
        }
        auto sc = std::make_shared<std::vector<size_t>>();
        auto sd = std::make_shared<std::vector<size_t>>();
        auto rc = std::make_shared<std::vector<size_t>>();
        auto rd = std::make_shared<std::vector<size_t>>();
        split_bytes(call, "input", in, in_splits, *sc, *sd);
        split_bytes(call, "output", out, out_splits, *rc, *rd);
        return enqueue(OpType::ALLTOALL_BASE, call, {{out}}, opts.timeout,
                       [in, out, sc, sd, rc, rd](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                           return post(r, ucoll_ialltoallv(ptr(in), sc->data(), sd->data(),
                                                           ptr(out), rc->data(), rd->data(),
                                                           UCOLL_BYTE, c, slot(r)));
                       });
    }

    c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor> &outputs,
                                            std::vector<at::Tensor> &inputs,
                                            const c10d::AllToAllOptions &opts) override
    {
        const char *call = "alltoall";
        TORCH_CHECK(inputs.size() == (size_t)size_ && outputs.size() == (size_t)size_, "ucoll ",
                    call, ": expects ", size_, " input and output tensors, got ", inputs.size(),
                    " and ", outputs.size());
        auto sc = std::make_shared<std::vector<size_t>>(size_);
        auto sd = std::make_shared<std::vector<size_t>>(size_);
        auto rc = std::make_shared<std::vector<size_t>>(size_);
        auto rd = std::make_shared<std::vector<size_t>>(size_);
        size_t soff = 0, roff = 0;
        std::vector<at::Tensor> flat_in;
        for (int i = 0; i < size_; ++i) {
            check_cpu(call, inputs[i]);
            check_cpu(call, outputs[i]);
            TORCH_CHECK(inputs[i].scalar_type() == inputs[0].scalar_type() &&
                            outputs[i].scalar_type() == inputs[0].scalar_type(),
                        "ucoll ", call, ": all tensors must share one dtype");
            (*sc)[i] = nbytes(inputs[i]);
            (*sd)[i] = soff;
            soff += (*sc)[i];
            (*rc)[i] = nbytes(outputs[i]);
            (*rd)[i] = roff;
            roff += (*rc)[i];
            flat_in.push_back(inputs[i].reshape({-1}));
        }
        at::Tensor in = at::cat(flat_in);
        std::vector<at::Tensor> outs = outputs;
        at::Tensor flat =
            at::empty({(int64_t)(roff / std::max<size_t>(1, in.element_size()))}, in.options());
        return enqueue(
            OpType::ALLTOALL, call, {outs}, opts.timeout,
            [in, flat, sc, sd, rc, rd](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                return post(r, ucoll_ialltoallv(ptr(in), sc->data(), sd->data(), ptr(flat),
                                                rc->data(), rd->data(), UCOLL_BYTE, c, slot(r)));
            },
            [flat, outs]() mutable { unflatten(flat, outs); });
    }

    c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions &opts) override
    {
        return enqueue(OpType::BARRIER, "barrier", {}, opts.timeout,
                       [](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                           return post(r, ucoll_ibarrier(c, slot(r)));
                       });
    }

    /* ---- point to point ---- */

    c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor> &tensors, int dst, int tag) override
    {
        const char *call = "send";
        at::Tensor t = single(call, tensors);
        check_peer(call, dst, tag);
        return enqueue(OpType::SEND, call, {}, kUnset,
                       [t, dst, tag](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                           return post(
                               r, ucoll_isend(ptr(t), nbytes(t), UCOLL_BYTE, dst, tag, c, slot(r)));
                       });
    }

    c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor> &tensors, int src, int tag) override
    {
        const char *call = "recv";
        at::Tensor t = single(call, tensors);
        check_peer(call, src, tag);
        return recv_from(call, OpType::RECV, t, src, tag);
    }

    c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor> &tensors, int tag) override
    {
        const char *call = "recvAnysource";
        at::Tensor t = single(call, tensors);
        check_peer(call, 0, tag);
        return recv_from(call, OpType::RECVANYSOURCE, t, UCOLL_ANY_SOURCE, tag);
    }

  private:
    using FinishFn = WorkUcoll::FinishFn;
    using StartFn = WorkUcoll::StartFn;
    static constexpr std::chrono::milliseconds kUnset = c10d::kUnsetTimeout;

    /* the slot a nonblocking call writes its request into */
    static ucoll_req_t **slot(std::vector<ucoll_req_t *> &r)
    {
        r.push_back(nullptr);
        return &r.back();
    }

    /* a failed call wrote no request: drop its slot */
    static int post(std::vector<ucoll_req_t *> &r, int status)
    {
        if (status != UCOLL_OK) {
            r.pop_back();
        }
        return status;
    }

    static void unflatten(const at::Tensor &flat, std::vector<at::Tensor> &outs)
    {
        int64_t off = 0;
        for (auto &o : outs) {
            const int64_t n = o.numel();
            o.copy_(flat.narrow(0, off, n).view(o.sizes()));
            off += n;
        }
    }

    void check_root(const char *call, int64_t root) const
    {
        TORCH_CHECK(root >= 0 && root < size_, "ucoll ", call, ": root ", root,
                    " is not a rank of this group (size ", size_, ")");
    }

    void check_peer(const char *call, int peer, int tag) const
    {
        TORCH_CHECK(peer >= 0 && peer < size_, "ucoll ", call, ": rank ", peer,
                    " is not a rank of this group (size ", size_, ")");
        TORCH_CHECK(tag >= 0 && tag <= UCOLL_TAG_UB, "ucoll ", call, ": tag ", tag,
                    " is outside 0..", UCOLL_TAG_UB);
    }

    /* byte counts and displacements of an alltoall_base side from its split
     * sizes along dimension 0 (empty: equal splits) */
    void split_bytes(const char *call, const char *side, const at::Tensor &t,
                     const std::vector<int64_t> &splits, std::vector<size_t> &counts,
                     std::vector<size_t> &displs) const
    {
        const int64_t rows = t.dim() ? t.size(0) : 0;
        const size_t row_bytes = rows ? nbytes(t) / rows : 0;
        counts.assign(size_, 0);
        displs.assign(size_, 0);
        if (splits.empty()) {
            TORCH_CHECK(rows % size_ == 0, "ucoll ", call, ": dimension 0 of the ", side, " (",
                        rows, ") must divide by the group size ", size_,
                        " when its split sizes are not given");
        } else {
            TORCH_CHECK(splits.size() == (size_t)size_, "ucoll ", call, ": ", side,
                        " split sizes must have ", size_, " entries, got ", splits.size());
        }
        int64_t sum = 0;
        for (int i = 0; i < size_; ++i) {
            const int64_t s = splits.empty() ? rows / size_ : splits[i];
            TORCH_CHECK(s >= 0, "ucoll ", call, ": negative ", side, " split size");
            counts[i] = (size_t)s * row_bytes;
            displs[i] = (size_t)sum * row_bytes;
            sum += s;
        }
        TORCH_CHECK(sum == rows, "ucoll ", call, ": ", side, " split sizes add up to ", sum,
                    ", dimension 0 is ", rows);
    }

    c10::intrusive_ptr<c10d::Work> allreduce_list(const char *call, OpType type,
                                                  std::vector<at::Tensor> ts, const ReduceOp &rop,
                                                  std::chrono::milliseconds timeout)
    {
        std::vector<Reduction> reds;
        for (auto &t : ts) {
            reds.push_back(reduction_of(call, rop, t.scalar_type()));
        }
        FinishFn fin;
        if (reds[0].avg) {
            const int p = size_;
            fin = [ts, p]() mutable {
                for (auto &t : ts) {
                    divide_avg(t, p);
                }
            };
        }
        return enqueue(
            type, call, {ts}, timeout,
            [ts, reds](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                for (size_t i = 0; i < ts.size(); ++i) {
                    const size_t count = (size_t)ts[i].numel() * reds[i].ut.mult;
                    int st = post(r, ucoll_iallreduce(UCOLL_IN_PLACE, ptr(ts[i]), count,
                                                      reds[i].ut.dt, reds[i].op, c, slot(r)));
                    if (st != UCOLL_OK) {
                        return st;
                    }
                }
                return (int)UCOLL_OK;
            },
            std::move(fin));
    }

    c10::intrusive_ptr<c10d::Work> reduce_scatter_flat(const char *call, OpType type,
                                                       at::Tensor out, at::Tensor in,
                                                       const c10d::ReduceScatterOptions &opts)
    {
        const Reduction red = reduction_of(call, opts.reduceOp, out.scalar_type());
        const size_t count = (size_t)out.numel() * red.ut.mult;
        FinishFn fin;
        if (red.avg) {
            const int p = size_;
            fin = [out, p]() mutable { divide_avg(out, p); };
        }
        return enqueue(
            type, call, {{out}}, opts.timeout,
            [in, out, red, count](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                return post(r, ucoll_ireduce_scatter_block(ptr(in), ptr(out), count, red.ut.dt,
                                                           red.op, c, slot(r)));
            },
            std::move(fin));
    }

    c10::intrusive_ptr<c10d::Work> recv_from(const char *call, OpType type, at::Tensor t, int src,
                                             int tag)
    {
        auto w = make_work(
            type, call, {{t}}, kUnset,
            [t, src, tag](ucoll_comm_t *c, std::vector<ucoll_req_t *> &r) {
                return post(r, ucoll_irecv(ptr(t), nbytes(t), UCOLL_BYTE, src, tag, c, slot(r)));
            },
            nullptr);
        if (src == UCOLL_ANY_SOURCE) {
            w->anysource_ = true;
        } else {
            w->source_ = src;
        }
        submit(w);
        return w;
    }

    c10::intrusive_ptr<WorkUcoll> make_work(OpType type, const char *call, Outputs outputs,
                                            std::chrono::milliseconds timeout, StartFn start,
                                            FinishFn finish)
    {
        if (timeout == kUnset) {
            timeout = timeout_;
        }
        const Clock::time_point deadline =
            timeout.count() > 0 ? Clock::now() + timeout : Clock::time_point::max();
        return c10::make_intrusive<WorkUcoll>(rank_, type, call, std::move(outputs),
                                              std::move(start), std::move(finish), deadline);
    }

    void submit(const c10::intrusive_ptr<WorkUcoll> &w) { worker_->submit(w); }

    c10::intrusive_ptr<c10d::Work> enqueue(OpType type, const char *call, Outputs outputs,
                                           std::chrono::milliseconds timeout, StartFn start,
                                           FinishFn finish = nullptr)
    {
        auto w =
            make_work(type, call, std::move(outputs), timeout, std::move(start), std::move(finish));
        submit(w);
        return w;
    }

    std::chrono::milliseconds timeout_;
    std::shared_ptr<Worker> worker_;
    std::thread thread_;
};

constexpr std::chrono::milliseconds ProcessGroupUcoll::kUnset;

static c10::intrusive_ptr<c10d::ProcessGroup>
create_process_group(const c10::intrusive_ptr<c10d::Store> &store, int rank, int size,
                     std::chrono::milliseconds timeout)
{
    return c10::make_intrusive<ProcessGroupUcoll>(store, rank, size, timeout);
}

/* (rank, size, token) of this process in the job of its PMIx launcher
 * (ucollrun, mpirun, srun), from a ucoll context made and finalized on the
 * spot; (0, 1, token) without one. The token is 16 hex digits drawn by rank
 * 0 and broadcast to all ranks: the same in every rank and new in every
 * job, where the PMIx namespace may repeat (ucollrun's and mpirun's carry
 * the launcher's process id). */
static std::tuple<int, int, std::string> launcher_job()
{
    ucoll_ctx_t *ctx = nullptr;
    int st = ucoll_init(&ctx);
    TORCH_CHECK(st == UCOLL_OK, "ucoll: ucoll_init failed: ", ucoll_strerror(st));
    ucoll_comm_t *world = ucoll_comm_world(ctx);
    const int rank = ucoll_comm_rank(world), size = ucoll_comm_size(world);
    uint64_t token = 0;
    if (rank == 0) {
        std::random_device rd;
        token = ((uint64_t)rd() << 32) ^ rd() ^
                (uint64_t)std::chrono::steady_clock::now().time_since_epoch().count();
    }
    st = ucoll_bcast(&token, 1, UCOLL_UINT64, 0, world);
    ucoll_finalize(ctx);
    TORCH_CHECK(st == UCOLL_OK, "ucoll: broadcast of the job token failed: ", ucoll_strerror(st));
    char hex[17];
    snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)token);
    return std::make_tuple(rank, size, std::string(hex));
}

} // namespace ucoll_torch

PYBIND11_MODULE(_ucoll_torch, m)
{
    namespace py = pybind11;
    using namespace ucoll_torch;
    m.doc() = "torch.distributed backend 'ucoll' (c10d::ProcessGroup on libucoll)";
    py::module::import("torch.distributed");
    py::class_<ProcessGroupUcoll, c10d::ProcessGroup, c10::intrusive_ptr<ProcessGroupUcoll>>(
        m, "ProcessGroupUcoll")
        .def(py::init<const c10::intrusive_ptr<c10d::Store> &, int, int,
                      std::chrono::milliseconds>(),
             py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
             py::call_guard<py::gil_scoped_release>());
    m.def("create_process_group", &create_process_group, py::arg("store"), py::arg("rank"),
          py::arg("size"), py::arg("timeout"), py::call_guard<py::gil_scoped_release>(),
          "Creator function for torch.distributed.Backend.register_backend");
    m.def("launcher_job", &launcher_job, py::call_guard<py::gil_scoped_release>(),
          "(rank, size, token) of this process from its PMIx launcher; the token is "
          "the same in every rank of a job and new in every job");
    m.attr("ucoll_version") = ucoll_version();
}
