// SPDX-License-Identifier: MIT
#pragma once

#include <QDialog>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;

namespace memledger::ui {

// File > Save as: the plan's name and description, editable, and the file
// it goes to (Choose… opens the file dialog). A plan edited since it was
// loaded does not keep the description of the plan as loaded, which may quote
// numbers this one no longer has: the field starts from the current plan's
// facts and the old description is shown beside it to copy from.
class SavePlanDialog : public QDialog
{
    Q_OBJECT
public:
    struct Suggestion
    {
        QString name;
        QString description; // what the field starts with
        QString previousDescription; // the description as loaded, shown when it was replaced
        QString path; // the file to write
    };
    explicit SavePlanDialog(const Suggestion &suggestion, QWidget *parent = nullptr);

    QString name() const;
    QString description() const;
    QString path() const;
    void setName(const QString &name);
    void setDescription(const QString &description);
    void setPath(const QString &path);

    // Where a new plan is saved: the user's documents folder (the home folder without one).
    static QString defaultFolder();
    // "Llama 3 70B, 64K" -> "llama-3-70b-64k.json", in `folder`.
    static QString suggestedPath(const QString &folder, const QString &name);
    // A file of the presets shipped with MemLedger (presets/scenarios/<built-in>.json):
    // Save as never suggests writing over one.
    static bool isShippedPreset(const QString &path);

private:
    void choosePath();
    void updateOk();

    QLineEdit *m_name;
    QPlainTextEdit *m_description;
    QLineEdit *m_path;
    QPushButton *m_ok = nullptr;
};

} // namespace memledger::ui
