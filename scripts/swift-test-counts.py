#!/usr/bin/env python3
"""Counts a Swift Testing run for scripts/vivid-guest.sh: prints "PASSED FAILED SKIPPED NOTE".

usage: swift-test-counts.py XUNIT_XML EVENT_STREAM_JSONL

From the xunit report when there is one; after a crash or a timeout it is
missing or cut short, so the counts come from the event stream, naming the
tests that started and never ended.
"""
import json
import os
import sys
import xml.etree.ElementTree as ET


def from_xunit(path):
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    # "tests" counts tests that ran (not skipped); "failures" counts ISSUES,
    # so failed tests are the testcases holding a <failure>/<error>.
    ran = sum(int(s.get("tests", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    names = [c.get("classname", "") + "/" + c.get("name", "")
             for s in suites for c in s.findall("testcase")
             if c.find("failure") is not None or c.find("error") is not None]
    return max(ran - len(names), 0), len(names), skipped, ("failed: " + ", ".join(names)) if names else ""


def from_events(path, why):
    kinds, started, ended, failed, skipped = {}, set(), set(), set(), set()
    try:
        for line in open(path):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            payload = record.get("payload", {})
            if record.get("kind") == "test":
                kinds[payload.get("id")] = payload.get("kind")
                continue
            test, kind = payload.get("testID"), payload.get("kind")
            if kind == "testStarted":
                started.add(test)
            elif kind == "testEnded":
                ended.add(test)
            elif kind == "testSkipped":
                skipped.add(test)
            elif kind == "issueRecorded" and not payload.get("issue", {}).get("isKnown"):
                failed.add(test)
    except OSError:
        pass

    def functions(ids):
        return {t for t in ids if kinds.get(t) == "function"}

    running = functions(started) - functions(ended)
    fails = functions(failed) | running
    passed = functions(ended) - fails
    note = why + (f"; crashed or hung in: {', '.join(sorted(running))}" if running else "")
    return len(passed), max(len(fails), 1), len(functions(skipped)), note


def main(xml_path, events_path):
    if os.path.exists(xml_path) and os.path.getsize(xml_path) > 0:
        try:
            return from_xunit(xml_path)
        except Exception as error:  # a report cut short
            return from_events(events_path, f"xunit unreadable: {error}")
    return from_events(events_path, "no xunit report")


if __name__ == "__main__":
    print(*main(sys.argv[1], sys.argv[2]))
