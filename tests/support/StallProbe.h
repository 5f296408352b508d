#pragma once
// Measures how long the GUI thread's event loop stops turning during a journey: a 1 ms precise
// timer on the GUI thread, whose longest gap between two ticks is the longest stall. The figure
// is an upper bound of the application's stalls: QTest's waits sleep up to 10 ms between turns
// (turn() and turnUntil() do not), and a test's own synchronous steps count too unless step()
// starts after them. Tests print it
// (summary()) for bench/RESULTS.md and fail only on a gross stall (kGrossStallMs), since the
// figure depends on the machine's load.
#include <QElapsedTimer>
#include <QEventLoop>
#include <QObject>
#include <QString>
#include <QTimer>

namespace faultline::test {

class StallProbe : public QObject {
public:
    // Beyond this a journey has frozen the window, whatever the load.
    static constexpr double kGrossStallMs = 1000.0;

    explicit StallProbe(QString journey) : m_journey(std::move(journey))
    {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(1);
        connect(&m_timer, &QTimer::timeout, this, [this] {
            const double now = double(m_clock.nsecsElapsed()) / 1e6;
            if (now - m_last > m_longest) {
                m_longest = now - m_last;
                m_where = m_step;
            }
            m_last = now;
            ++m_samples;
        });
        m_clock.start();
        m_timer.start();
    }
    // Names the step that follows; the time since the last tick (the test's own set-up) is not counted.
    void step(const QString& name)
    {
        m_step = name;
        m_last = double(m_clock.nsecsElapsed()) / 1e6;
    }
    // Turns the event loop for `ms`, waking for every event: unlike QTest's waits, which sleep up to
    // 10 ms between turns (a gap the probe counts as a stall), nothing is added to the figure.
    static void turn(int ms)
    {
        QEventLoop loop;
        QTimer::singleShot(ms, Qt::PreciseTimer, &loop, &QEventLoop::quit);
        loop.exec();
    }
    // Turns the event loop until done() or `timeoutMs`, as turn(); returns done().
    template <class Done>
    static bool turnUntil(Done done, int timeoutMs)
    {
        if (done()) return true;
        QEventLoop loop;
        QTimer poll;
        poll.setTimerType(Qt::PreciseTimer);
        poll.setInterval(2);
        QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
            if (done()) loop.quit();
        });
        poll.start();
        QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
        loop.exec();
        return done();
    }
    double longest() const { return m_longest; }
    QString where() const { return m_where; }
    quint64 samples() const { return m_samples; }
    // "longest GUI-thread stall in <journey>: 12.3 ms (in <step>; N samples of the event loop)"
    QString summary() const
    {
        return QStringLiteral("longest GUI-thread stall in %1: %2 ms (in %3; %4 samples of the event loop)")
            .arg(m_journey)
            .arg(m_longest, 0, 'f', 1)
            .arg(m_where.isEmpty() ? QStringLiteral("start") : m_where)
            .arg(m_samples);
    }

private:
    QString m_journey;
    QTimer m_timer;
    QElapsedTimer m_clock;
    double m_last = 0, m_longest = 0;
    QString m_step, m_where;
    quint64 m_samples = 0;
};

}  // namespace faultline::test
