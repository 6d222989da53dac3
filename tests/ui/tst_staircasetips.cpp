// SPDX-License-Identifier: MIT
// Issue 34, item 7: "The ZB-H1 staircase draws equal bars while its
// in-flight line reads 4, 3, 2, 1; staircase bars have no tooltips." The bars
// are equal because rank r holds p − r micro-batches for their backward and
// the inputs of r deferred weight passes (Qi et al. 2023, ZB-H1): hovering a
// bar now says so, from the rank's ledger rows.
#include "catchqt.h"
#include "testwindow.h"
#include "ui/document.h"
#include "ui/mainwindow.h"
#include "ui/staircasechart.h"

using namespace memledger;
using namespace memledger::test;

TEST_CASE("A staircase bar's tooltip names the rank's activation rows and its micro-batches in flight",
          "[ui][staircase]")
{
    TestWindow gui("llama-3-70b-128xh100"); // p = 4
    Config zb = gui.document.config();
    zb.parallelism.pipeline_schedule = PipelineSchedule::ZbH1;
    gui.document.edit(zb, QStringLiteral("ZB-H1"));
    settle();
    ui::StaircaseChart *staircase = gui.window.staircase();
    REQUIRE(staircase != nullptr);
    const QString rank1 = staircase->barToolTip(1);
    INFO(rank1.toStdString());
    CHECK(rank1.startsWith(QStringLiteral("Rank 1: ")));
    CHECK(rank1.contains(QStringLiteral("3 micro-batches in flight")));
    CHECK(rank1.contains(QStringLiteral("Transformer layers")));
    CHECK(rank1.contains(QStringLiteral("Inputs of deferred weight passes")));
    CHECK(rank1.contains(QStringLiteral("1 micro-batch past B, before W")));
    // Rank 0 defers none: no such row.
    CHECK_FALSE(staircase->barToolTip(0).contains(QStringLiteral("deferred weight passes")));
    CHECK(staircase->barToolTip(4).isEmpty()); // p = 4: no fifth bar
}
