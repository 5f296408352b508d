// serveWorkerRequests and a target whose error poisons it (a sticky CUDA error): the reply says
// "fatal":true and the worker stops serving with exit code 3, leaving later requests unread;
// an ordinary error is not fatal and serving goes on.
#include <QtTest>

#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/replay/Target.h"
#include "core/replay/WorkerProtocol.h"
#include "support/TestSupport.h"

using namespace faultline;

namespace {

class FailingTarget : public Target {
public:
    explicit FailingTarget(bool sticky) : m_sticky(sticky) {}
    std::string label() const override { return "cuda:7"; }
    std::string describe() const override { return "test target"; }
    bool bitwiseStable() const override { return true; }
    Result<ReplayOutput> run(const ReplayRequest&, uint64_t) override
    {
        ++runs;
        m_failed = true;
        return Error{m_sticky
                         ? "cuda:7: running the op: cudaErrorIllegalAddress (700): an illegal memory access"
                         : "cuda:7: op attention: no golden CUDA kernel"};
    }
    bool fatalError() const override { return m_sticky && m_failed; }
    int runs = 0;

private:
    bool m_sticky;
    bool m_failed = false;
};

}  // namespace

class TestWorkerFatal : public QObject {
    Q_OBJECT

private slots:
    void stickyErrorEndsTheWorker()
    {
        FailingTarget target(true);
        const Trace trace = faultline::test::oneOpTrace();
        std::istringstream in(
            "{\"id\":1,\"op\":0,\"out\":\"/nonexistent/x.safetensors\"}\n"
            "{\"id\":2,\"op\":0,\"out\":\"/nonexistent/y.safetensors\"}\n");
        std::ostringstream out;
        QCOMPARE(serveWorkerRequests(in, out, target, trace), 3);
        const auto replies = faultline::test::jsonLines(out.str());
        QCOMPARE(replies.size(), size_t(2));  // hello + one reply
        QCOMPARE(replies[1]["id"].get<int>(), 1);
        QCOMPARE(replies[1]["ok"].get<bool>(), false);
        QCOMPARE(replies[1]["fatal"].get<bool>(), true);
        QVERIFY(replies[1]["error"].get<std::string>().find("cudaErrorIllegalAddress") != std::string::npos);
        QCOMPARE(target.runs, 1);
    }

    void ordinaryErrorKeepsServing()
    {
        FailingTarget target(false);
        const Trace trace = faultline::test::oneOpTrace();
        std::istringstream in(
            "{\"id\":1,\"op\":0,\"out\":\"/nonexistent/x.safetensors\"}\n"
            "{\"id\":2,\"op\":0,\"out\":\"/nonexistent/y.safetensors\"}\n");
        std::ostringstream out;
        QCOMPARE(serveWorkerRequests(in, out, target, trace), 0);
        const auto replies = faultline::test::jsonLines(out.str());
        QCOMPARE(replies.size(), size_t(3));
        for (size_t i = 1; i < 3; ++i) {
            QCOMPARE(replies[i]["ok"].get<bool>(), false);
            QCOMPARE(replies[i]["fatal"].get<bool>(), false);
        }
        QCOMPARE(target.runs, 2);
    }
};

QTEST_APPLESS_MAIN(TestWorkerFatal)
#include "test_worker_fatal.moc"
