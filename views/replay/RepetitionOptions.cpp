#include "views/replay/RepetitionOptions.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QStackedWidget>
#include <cmath>

#include "views/plots/PlotStyle.h"

namespace faultline::views {

RepetitionOptions::RepetitionOptions(QWidget* parent) : QWidget(parent)
{
    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    m_mode = new QComboBox;
    m_mode->setObjectName(QStringLiteral("replayRepetitionMode"));
    m_mode->addItem(tr("Fixed repetitions"), int(Mode::FixedReps));
    m_mode->addItem(tr("Until a rate is ruled out"), int(Mode::UntilRate));
    m_mode->setToolTip(
        tr("Fixed: the same number of runs of every op on every target (replay --reps).\n"
           "Until a rate is ruled out: runs until a failure, until no failure puts the failure rate "
           "below the rate at the confidence, or until the budget is spent (replay --until-rate)"));
    form->addRow(tr("Repetitions"), m_mode);

    m_pages = new QStackedWidget;
    auto* fixedPage = new QWidget;
    auto* fixedForm = new QFormLayout(fixedPage);
    fixedForm->setContentsMargins(0, 0, 0, 0);
    m_reps = new QSpinBox;
    m_reps->setObjectName(QStringLiteral("replayReps"));
    m_reps->setRange(1, 1000);
    m_reps->setValue(3);
    m_reps->setToolTip(tr("Repetitions per op and target: more runs, tighter rate intervals"));
    fixedForm->addRow(tr("Runs per op"), m_reps);
    m_pages->addWidget(fixedPage);

    auto* ratePage = new QWidget;
    auto* rateForm = new QFormLayout(ratePage);
    rateForm->setContentsMargins(0, 0, 0, 0);
    m_rate = new QLineEdit(QStringLiteral("1e-3"));
    m_rate->setObjectName(QStringLiteral("replayUntilRate"));
    m_rate->setToolTip(tr("The failure rate to rule out, as --until-rate takes it: 1e-3, 0.001 or 0.1%"));
    rateForm->addRow(tr("Rule out a rate of"), m_rate);
    m_confidence = new QDoubleSpinBox;
    m_confidence->setObjectName(QStringLiteral("replayConfidence"));
    m_confidence->setRange(50, 99.99);
    m_confidence->setDecimals(2);
    m_confidence->setSuffix(QStringLiteral(" %"));
    m_confidence->setValue(95);
    m_confidence->setToolTip(tr("Confidence of the upper bound of the failure rate (--confidence)"));
    rateForm->addRow(tr("Confidence"), m_confidence);
    m_budget = new QLineEdit;
    m_budget->setObjectName(QStringLiteral("replayBudget"));
    m_budget->setPlaceholderText(tr("none (e.g. 90s, 10m, 2h)"));
    m_budget->setToolTip(
        tr("Wall-clock budget of the campaign (--budget): each target shares what is left among its "
           "unfinished ops; an op that ends early leaves its time to the next"));
    rateForm->addRow(tr("Budget"), m_budget);
    m_error = new QLabel;
    m_error->setObjectName(QStringLiteral("replayRepetitionError"));
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: %1").arg(PlotStyle::divergentColor().name()));
    m_error->hide();
    rateForm->addRow(m_error);
    m_pages->addWidget(ratePage);
    form->addRow(m_pages);

    m_timeout = new QDoubleSpinBox;
    m_timeout->setObjectName(QStringLiteral("replayTimeout"));
    m_timeout->setRange(0.1, 3600);
    m_timeout->setDecimals(1);
    m_timeout->setSuffix(tr(" s"));
    m_timeout->setValue(60);
    m_timeout->setToolTip(tr("A run that takes longer is recorded as a hang and its worker restarted"));
    form->addRow(tr("Timeout per run"), m_timeout);

    // Only the page of the current mode takes room.
    auto showPage = [this] {
        for (int i = 0; i < m_pages->count(); ++i)
            m_pages->widget(i)->setSizePolicy(QSizePolicy::Preferred, i == m_pages->currentIndex()
                                                                          ? QSizePolicy::Preferred
                                                                          : QSizePolicy::Ignored);
        m_pages->adjustSize();
    };
    connect(m_mode, &QComboBox::currentIndexChanged, this, [this, showPage](int index) {
        m_pages->setCurrentIndex(index);
        showPage();
        validate();
    });
    showPage();
    connect(m_rate, &QLineEdit::textChanged, this, &RepetitionOptions::validate);
    connect(m_budget, &QLineEdit::textChanged, this, &RepetitionOptions::validate);
    connect(m_confidence, &QDoubleSpinBox::valueChanged, this, &RepetitionOptions::validate);
    connect(m_reps, &QSpinBox::valueChanged, this, &RepetitionOptions::changed);
}

void RepetitionOptions::setMode(Mode mode)
{
    m_mode->setCurrentIndex(m_mode->findData(int(mode)));
}

RepetitionOptions::Mode RepetitionOptions::mode() const
{
    return Mode(m_mode->currentData().toInt());
}

void RepetitionOptions::setReps(int reps)
{
    m_reps->setValue(reps);
}

int RepetitionOptions::reps() const
{
    return m_reps->value();
}

void RepetitionOptions::setUntilRate(const QString& rate, double confidence, const QString& budget)
{
    m_rate->setText(rate);
    m_confidence->setValue(confidence * 100.0);
    m_budget->setText(budget);
    validate();
}

void RepetitionOptions::setTimeoutMs(int ms)
{
    m_timeout->setValue(ms / 1000.0);
}

std::chrono::milliseconds RepetitionOptions::timeout() const
{
    return std::chrono::milliseconds(qint64(m_timeout->value() * 1000));
}

Result<StoppingRule> RepetitionOptions::stoppingRule() const
{
    StoppingRule rule;
    if (mode() == Mode::FixedReps) return rule;
    auto rate = parseRate(m_rate->text().toStdString());
    if (!rate) return rate.error();
    rule.untilRate = *rate;
    // The spin box's percent, back to the fraction the rule takes (95.00 % is 0.95 exactly).
    rule.confidence = std::round(m_confidence->value() * 100.0) / 10000.0;
    if (const QString budget = m_budget->text().trimmed(); !budget.isEmpty()) {
        auto parsed = parseDuration(budget.toStdString());
        if (!parsed) return parsed.error();
        rule.budget = *parsed;
    }
    if (Status st = checkStoppingRule(rule); !st) return st.error();
    return rule;
}

void RepetitionOptions::validate()
{
    auto rule = stoppingRule();
    m_error->setText(rule ? QString() : QString::fromStdString(rule.message()));
    m_error->setVisible(!rule);
    emit changed();
}

QString RepetitionOptions::errorText() const
{
    return m_error->text();
}

quint64 RepetitionOptions::runsPerOpAtMost() const
{
    auto rule = stoppingRule();
    if (!rule || !rule->adaptive()) return quint64(m_reps->value());
    return runsToRuleOut(rule->untilRate, rule->confidence);
}

QString RepetitionOptions::summaryText() const
{
    auto rule = stoppingRule();
    if (!rule || !rule->adaptive()) return tr("%n rep(s)", nullptr, m_reps->value());
    QString text = tr("until a failure or rate < %1 at %2")
                       .arg(QString::fromStdString(rateNumberText(rule->untilRate)),
                            QString::fromStdString(confidenceText(rule->confidence)));
    if (rule->budget.count() > 0) text += tr(", budget %1").arg(m_budget->text().trimmed());
    return text;
}

void RepetitionOptions::setRunning(bool running)
{
    for (QWidget* w :
         std::initializer_list<QWidget*>{m_mode, m_reps, m_rate, m_confidence, m_budget, m_timeout})
        w->setEnabled(!running);
}

}  // namespace faultline::views
