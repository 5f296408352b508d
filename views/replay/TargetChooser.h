#pragma once
// The replay panel's targets: cpu (golden), the suspect's simulated defect (preselected), every
// simulated fault model, targets added by hand (kept per incident in QSettings), this machine's
// GPUs, and the reference among the checked ones ("" = the peers' majority decides). Specs are
// normalised and checked when added (a simulated model's parameters too), never in the worker.
#include <QGroupBox>
#include <QStringList>
#include <memory>

#include "views/incident/Incident.h"

class QComboBox;
class QLineEdit;
class QListWidget;
class QPushButton;

namespace faultline::views {

class TargetChooser : public QGroupBox {
    Q_OBJECT
public:
    explicit TargetChooser(QWidget* parent = nullptr);

    // A new incident: the list is rebuilt (its defect, its targets added by hand before).
    void setIncident(std::shared_ptr<const Incident> incident);
    // This machine's GPUs: offered as unchecked targets, or a note when there is none.
    void setLocalGpus(const QStringList& specs, const QStringList& labels);
    // Checks exactly these targets (adding ones not in the list); false with `error` set when one
    // does not parse (nothing changes then).
    bool setCheckedTargets(const QStringList& specs, QString* error);
    // Normalised specs of the checked targets, in list order.
    QStringList checkedTargets() const;
    // Every target offered, normalised.
    QStringList availableTargets() const;
    // "" (the peers' majority) or a checked target; false otherwise.
    bool setReference(const QString& spec);
    QString reference() const;
    // While a campaign runs nothing here can change.
    void setRunning(bool running);

    // `spec` as a target spec, normalised ("" with `error` set when it does not parse, or names a
    // simulated model or parameter that does not exist).
    static QString normalise(const QString& spec, QString* error = nullptr);
    // What a simulated target's fault model does ("" for other targets).
    static QString modelDescription(const QString& spec);

signals:
    // A target typed by hand was refused: why.
    void targetRefused(const QString& message);
    // A target typed by hand was added.
    void targetAdded(const QString& spec);

private:
    void rebuild();
    void refreshReferenceChoices();
    void showLocalGpus();
    void addTargetItem(const QString& spec, const QString& label, const QString& tip, bool checked);
    void addCustomTarget();
    // The QSettings key of the open incident's custom targets (by its trace's path); "" none.
    QString customTargetsKey() const;

    QListWidget* m_targets = nullptr;
    QLineEdit* m_customTarget = nullptr;
    QPushButton* m_add = nullptr;
    QComboBox* m_reference = nullptr;
    std::shared_ptr<const Incident> m_incident;
    QStringList m_gpuSpecs, m_gpuLabels;
};

}  // namespace faultline::views
