"""Prompt size of the three skills modes, and how often `retrieve` finds the skill a task needs.

    /work/venv/bin/python benchmarks/perf/skill_modes.py [--sizes 5 30 100]

For synthetic workspaces of 5, 30 and 100 distinct skills (20 topics x 5 skills, each with a
realistic SKILL.md built from the table below) it prints the tokens of the task agent's system
prompt (prompts/agent_interactive.j2 with the skills block) in `full`, `index` and `retrieve`
(mean and max over the labelled tasks), then `retrieve`'s recall@1/3/5 on 100 labelled task texts
(one per skill, written so that none contains its skill's name). Recall for a workspace counts
the tasks whose skill is in it; every other skill is a distractor.

Tokens are cl100k_base (tiktoken, with the tokenizer file litellm bundles, so nothing is
downloaded) when available, else characters / 4; the output says which.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from wikiskill.core.config import SkillsSettings  # noqa: E402
from wikiskill.core.prompts import render  # noqa: E402
from wikiskill.knowledge.skills import Skill, parse_skill  # noqa: E402
from wikiskill.knowledge.skillsblock import LOAD_SKILL_TOOL, render_skills, retrieve  # noqa: E402

SIZES = (5, 30, 100)
RECALL_AT = (1, 3, 5)
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


@dataclass(frozen=True)
class Spec:
    """One synthetic skill and a task that needs it."""

    name: str
    description: str
    when: str
    not_when: str
    steps: tuple[str, ...]
    task: str


def S(name: str, description: str, when: str, not_when: str, steps: str, task: str) -> Spec:  # noqa: N802
    return Spec(name, description, when, not_when, tuple(s.strip() for s in steps.split(";")), task)


# 20 topics x 5 skills. Topics are interleaved by `ordered_specs`, so the 5- and 30-skill
# workspaces already mix several topics.
SPECS: tuple[Spec, ...] = (
    # text games: cooking
    S(
        "slice-ingredients-before-cooking",
        "Prepare each ingredient with the knife as the recipe says before any heat.",
        "the recipe lists sliced, diced or chopped ingredients",
        "the ingredient needs no cutting",
        "take the knife; cut the ingredient exactly as written (slice, dice or chop); only then cook it",
        "The cookbook wants the carrot diced and fried; you are holding the carrot and a knife lies on the counter.",
    ),
    S(
        "avoid-burning-food",
        "Cook every ingredient exactly once; a second stove or oven pass burns it and loses the game.",
        "an ingredient was already roasted, fried or grilled",
        "the ingredient has not been heated yet",
        "check the inventory description for 'fried' or 'roasted'; never apply heat twice; move on to the next step",
        "Your red pepper already shows as fried and the recipe also says fried pepper; the stove is right there.",
    ),
    S(
        "read-recipe-first",
        "Examine the cookbook before collecting anything so every later action serves the recipe.",
        "a meal must be prepared and a cookbook is present",
        "the recipe has already been read this episode",
        "examine the cookbook; list each ingredient and its preparation; collect only those",
        "You enter a kitchen, a cookbook lies on the table, and the goal says to prepare a meal and eat it.",
    ),
    S(
        "open-containers-to-find-items",
        "Open fridges, cupboards, drawers and boxes when a needed item is not visible.",
        "a required object is not in sight but closed containers are",
        "the item is already in the inventory",
        "open every closed container in the room; look again; take the item",
        "The recipe needs a yellow potato, none is visible, and there is a closed fridge and a closed drawer.",
    ),
    S(
        "navigate-unexplored-rooms",
        "Search for missing objects by walking through unexplored exits and remembering visited rooms.",
        "an object is missing from the current room and unexplored exits remain",
        "the object is in the room",
        "list the exits not yet taken; walk through one; look; return when it is a dead end",
        "The knife is nowhere in the kitchen and there are exits north and east that you have not taken.",
    ),
    # arithmetic word problems
    S(
        "unit-conversion-check",
        "Convert every quantity to one unit before combining numbers in a word problem.",
        "a problem mixes grams and kilograms, minutes and hours, or similar units",
        "all quantities share a unit",
        "write each quantity with its unit; convert to the smallest unit; compute; convert the answer back",
        "A loaf needs 250 g of flour and the baker has 3 kg in stock; how many loaves can be baked?",
    ),
    S(
        "percentage-change-base",
        "Compute a percentage increase or decrease relative to the original value.",
        "a question asks by what percent something rose or fell",
        "only an absolute difference is asked",
        "take new minus old; divide by the old value; multiply by 100 and keep the sign",
        "A jacket used to cost 80 dollars and now sells for 60; by what percent did the price drop?",
    ),
    S(
        "rate-time-distance",
        "Solve movement problems with distance = speed x time, adding speeds when objects approach.",
        "objects travel toward or away from each other at given speeds",
        "there is no motion involved",
        "write distance = speed x time for each mover; add speeds for approach; solve for time",
        "Two trains leave stations 300 km apart toward each other at 70 and 80 km/h; when do they meet?",
    ),
    S(
        "off-by-one-counting",
        "Count inclusive ranges as last minus first plus one (fence-post rule).",
        "a question counts items, pages or days from one number through another",
        "a half-open range is meant",
        "decide whether both ends are included; compute last - first + 1 for inclusive ranges; "
        "sanity-check a tiny case",
        "How many pages do you read if you start on page 37 and finish at the end of page 112?",
    ),
    S(
        "round-only-at-end",
        "Keep full precision through intermediate steps and round just the final answer.",
        "money, tax or measurement results must be given to a fixed precision",
        "inputs are whole numbers",
        "carry every decimal; apply rounding once at the end; state the precision used",
        "Three items cost 19.99 each and sales tax is 8.25 percent; what is the bill to the cent?",
    ),
    # strings
    S(
        "reverse-string-letters",
        "Reverse a word by spelling it letter by letter and reading the letters backwards.",
        "a task asks for a word or phrase written backwards",
        "words, not letters, must be reordered",
        "write the letters one per position with indices; read from the last index to the first; join them",
        "Write 'strawberry' backwards, one character at a time from the end.",
    ),
    S(
        "count-character-occurrences",
        "Count how often a letter occurs by walking the word with a running tally.",
        "a question asks how many times a letter appears",
        "the task is about whole words",
        "spell the word with indices; mark every match; report the tally",
        "How many times does the letter r appear in 'strawberry'?",
    ),
    S(
        "anagram-check",
        "Decide whether two words use the same letters by sorting their letters.",
        "two words or phrases must be compared letter for letter",
        "only meaning matters",
        "lowercase both; drop spaces; sort the letters; compare the sorted strings",
        "Are 'listen' and 'silent' made of exactly the same letters?",
    ),
    S(
        "caesar-shift-decoding",
        "Decode a shift cipher by moving every letter back by the shift amount.",
        "text was encrypted by moving letters a fixed number of places",
        "the cipher is a substitution table",
        "find the shift; move each letter back, wrapping from a to z; keep case and punctuation",
        "Decode 'Khoor' if every letter was moved three places forward in the alphabet.",
    ),
    S(
        "palindrome-normalization",
        "Test palindromes after dropping case, spaces and punctuation.",
        "a phrase must read the same forwards and backwards",
        "exact characters matter",
        "keep only letters and digits; lowercase; compare with its reverse",
        "Does 'A man, a plan, a canal: Panama' read the same in both directions?",
    ),
    # dates
    S(
        "leap-year-rules",
        "Apply the full Gregorian leap year rule: divisible by 4, except centuries unless divisible by 400.",
        "a date on February 29 or a year length is involved",
        "the calendar is not Gregorian",
        "check divisibility by 400, then 100, then 4; decide; answer",
        "Was February 29 a valid date in the year 1900?",
    ),
    S(
        "weekday-calculation",
        "Find the day of the week of a date with a known anchor or Zeller's congruence.",
        "a question asks which weekday a date fell on",
        "the weekday is given",
        "pick a known anchor date; count days between; take the remainder modulo 7",
        "What day of the week was 4 July 1976?",
    ),
    S(
        "timezone-offset-conversion",
        "Convert clock times between cities through UTC, with daylight saving for that date.",
        "a meeting time must be given in another city's local time",
        "both places share a zone",
        "find each city's UTC offset on that date; convert to UTC; convert to the target zone",
        "A call is set for 9:00 in New York in January; what time is it in Berlin then?",
    ),
    S(
        "duration-across-midnight",
        "Compute durations that cross midnight by adding 24 hours to the end time.",
        "an interval starts late in the evening and ends the next morning",
        "both times are on the same day",
        "if end is before start add 24 h; subtract; express in hours and minutes",
        "A night shift starts at 22:30 and finishes at 06:15; how long is it?",
    ),
    S(
        "month-length-arithmetic",
        "Add months to dates by clamping to the last day of shorter months.",
        "a date plus or minus months lands on the 29th to 31st",
        "days, not months, are added",
        "move the month; if the day does not exist use the month's last day; state the rule",
        "What date is exactly one month after January 31, 2023?",
    ),
    # python debugging
    S(
        "read-traceback-bottom-up",
        "Read a Python traceback from the last line up to find the failing frame in your code.",
        "a program crashed with a traceback",
        "there is no error output",
        "read the exception type and message; find the lowest frame in project files; open that line",
        "My script dies with a KeyError and twenty lines of stack output; where should I start looking?",
    ),
    S(
        "mutable-default-argument",
        "Replace mutable default arguments with None to stop state leaking between calls.",
        "a function's list or dict default keeps values from earlier calls",
        "defaults are immutable",
        "change the default to None; create the list inside the function; add a test calling it twice",
        "Each call to add_item() returns a list that still contains the items from previous calls.",
    ),
    S(
        "off-by-one-slice-bounds",
        "Check slice and range end points, which exclude the stop index.",
        "a loop or slice misses the last element or includes one too many",
        "indices are not involved",
        "print the indices used; remember stop is exclusive; fix the bound and test the edges",
        "The loop over range(1, len(items)) never processes the first item of the list.",
    ),
    S(
        "floating-point-comparison",
        "Compare floats with a tolerance such as math.isclose, never with ==.",
        "a test compares computed decimals and fails on tiny differences",
        "values are integers or Decimals",
        "replace == with math.isclose; choose rel_tol; document the tolerance",
        "assert 0.1 + 0.2 == 0.3 fails in my unit test; why, and how do I write it?",
    ),
    S(
        "reproduce-before-fixing",
        "Write a failing test that reproduces a bug before changing the code.",
        "a bug report arrives and the cause is not yet known",
        "the change is a new feature",
        "reduce the report to a minimal input; write a test that fails; fix until it passes",
        "A user reports that exporting a report sometimes produces an empty file.",
    ),
    # SQL
    S(
        "null-aware-comparisons",
        "Use IS NULL / IS NOT NULL, since = NULL is never true in SQL.",
        "a filter on missing values returns no rows",
        "the column is declared NOT NULL",
        "replace = NULL with IS NULL; use COALESCE for defaults; recheck counts",
        "WHERE discount = NULL returns nothing even though many orders have no discount.",
    ),
    S(
        "group-by-aggregate-filter",
        "Filter aggregated groups with HAVING, not WHERE.",
        "a query must keep only groups whose count or sum passes a threshold",
        "rows are filtered before grouping",
        "group by the key; compute the aggregate; put the condition in HAVING",
        "List customers with more than five orders; my WHERE COUNT(*) > 5 is rejected.",
    ),
    S(
        "join-duplicate-rows",
        "Check join keys for one-to-many fan-out before trusting sums over a join.",
        "totals after a join are larger than expected",
        "the join is one-to-one",
        "count rows per key on each side; aggregate the many side first; then join",
        "Revenue doubled after I added the shipments table to the query.",
    ),
    S(
        "index-for-slow-query",
        "Read the query plan and add an index on the filtered or joined column.",
        "a query scans a large table and is slow",
        "the table is tiny",
        "run EXPLAIN; find the sequential scan; create the index; compare plans",
        "Looking up orders by customer email takes eight seconds on a table of ten million rows.",
    ),
    S(
        "transaction-for-multi-update",
        "Wrap related writes in one transaction so a failure leaves no half-applied change.",
        "several UPDATE or INSERT statements must succeed together",
        "a single statement is run",
        "BEGIN; run the statements; COMMIT, or ROLLBACK on error",
        "Moving money between two accounts needs a debit and a credit; a crash in between lost money.",
    ),
    # HTTP APIs
    S(
        "respect-rate-limit-retry-after",
        "On HTTP 429 wait for the Retry-After header before retrying.",
        "an API answers 429 Too Many Requests",
        "the error is a 4xx other than 429",
        "read Retry-After; sleep that long plus jitter; retry a bounded number of times",
        "The API keeps answering 429 and my client hammers it again immediately.",
    ),
    S(
        "paginate-until-exhausted",
        "Follow next-page cursors until the API returns none, instead of reading one page.",
        "a list endpoint returns a cursor or next link",
        "the response holds every item",
        "request the first page; follow the cursor; stop when it is empty; concatenate",
        "I only get 100 users back although the organisation has 2,300 members.",
    ),
    S(
        "idempotency-keys-for-retries",
        "Send an idempotency key with POST requests that may be retried.",
        "a payment or order creation call might be sent twice on timeout",
        "the request is a GET",
        "generate a key per logical operation; send it as a header; reuse it on retry",
        "After a timeout and a retry, the customer was charged twice.",
    ),
    S(
        "check-status-before-parsing",
        "Check the HTTP status and content type before parsing a response body.",
        "JSON parsing fails on an API response",
        "the status is known to be 200",
        "inspect status code; log the body on error; parse only 2xx JSON",
        "json.loads raises on the response and the body starts with '<html>'.",
    ),
    S(
        "auth-token-refresh",
        "Refresh an expired OAuth access token once and retry the request.",
        "calls start failing with 401 after running for an hour",
        "credentials are wrong from the start",
        "detect 401; use the refresh token; retry once; fail loudly if it fails again",
        "My sync job works for about an hour, then every call returns 401 Unauthorized.",
    ),
    # shell
    S(
        "quote-paths-with-spaces",
        "Quote shell variables and paths so names with spaces stay one argument.",
        "a command breaks on file names with spaces",
        "names are generated without spaces",
        "wrap expansions in double quotes; use -- before paths; test with a spaced name",
        "rm $file deleted the wrong things when the name was 'my report.pdf'.",
    ),
    S(
        "dry-run-destructive-commands",
        "Preview destructive commands (rm, rsync --delete, migrations) before running them.",
        "a command deletes or overwrites many files",
        "the command only reads",
        "run with --dry-run or echo first; inspect the list; run for real",
        "I want to mirror a folder to the backup disk with delete enabled.",
    ),
    S(
        "check-exit-codes",
        "Stop scripts on failure with set -euo pipefail and explicit exit code checks.",
        "a shell script continues after a failed step",
        "the step may fail harmlessly",
        "add set -euo pipefail; check $? where needed; print the failing step",
        "My deploy script kept going after the build failed and shipped an empty folder.",
    ),
    S(
        "find-large-files",
        "Locate what fills a disk with du and find sorted by size.",
        "a disk is full and the cause is unknown",
        "quotas are the problem",
        "run du -xh --max-depth=1 | sort -h; descend into the largest; list big files with find -size",
        "The server's root partition is at 100 percent and I do not know what grew.",
    ),
    S(
        "relative-vs-absolute-paths",
        "Resolve paths from the script's location, not the current directory.",
        "a script works from one folder but fails from another",
        "paths are absolute already",
        "compute the script directory; join paths from it; print resolved paths when debugging",
        "The tool cannot find config.yaml when I start it from my home directory.",
    ),
    # git
    S(
        "resolve-merge-conflict-markers",
        "Resolve conflicts by editing between the <<<<<<< and >>>>>>> markers and testing.",
        "a merge or rebase stopped with conflicts",
        "the merge is clean",
        "open each conflicted file; keep the right combination; remove markers; run tests; continue",
        "The rebase stopped and several files contain lines with <<<<<<< HEAD.",
    ),
    S(
        "revert-not-reset-shared-history",
        "Undo pushed commits with git revert instead of rewriting shared history.",
        "a bad commit is already on a shared branch",
        "the commit is local only",
        "find the commit; git revert it; push the new commit",
        "A broken commit went to the team's main branch an hour ago; how do I undo it safely?",
    ),
    S(
        "bisect-regression",
        "Find the commit that introduced a regression with git bisect.",
        "something worked in an older version and fails now",
        "the culprit commit is known",
        "mark a good and a bad commit; test each step; let bisect name the first bad commit",
        "The export worked in last month's release and fails today, with 300 commits in between.",
    ),
    S(
        "stage-partial-changes",
        "Commit only part of a file's changes with interactive staging.",
        "one file mixes unrelated edits that belong in separate commits",
        "all edits belong together",
        "git add -p; choose hunks; commit; repeat for the rest",
        "I fixed a bug and also reformatted the same file; I want two separate commits.",
    ),
    S(
        "recover-lost-commit-reflog",
        "Recover commits lost after a reset or deleted branch from the reflog.",
        "work disappeared after a hard reset or branch deletion",
        "the commit was never made",
        "git reflog; find the commit; create a branch at it",
        "I ran reset --hard and my last two days of commits are gone.",
    ),
    # web shopping
    S(
        "match-all-product-attributes",
        "Check every requested attribute (size, colour, material, price) before choosing a product.",
        "a shopping instruction lists several attributes",
        "only the product type is given",
        "list the attributes; open candidates; confirm each; choose the one that matches all",
        "Buy a men's cotton t-shirt, navy, size large, under 20 dollars.",
    ),
    S(
        "use-search-filters",
        "Narrow search results with the site's filters instead of scrolling.",
        "a search returns many pages of results",
        "there are only a few results",
        "apply price, brand and rating filters; sort by relevance; then open items",
        "The search for running shoes shows 48 pages of results.",
    ),
    S(
        "compare-price-per-unit",
        "Compare offers by price per unit, not by package price.",
        "products come in different pack sizes",
        "packs are identical",
        "divide price by quantity; compare unit prices; note the best",
        "Is the 12-pack of batteries at 9.49 cheaper than the 4-pack at 3.29?",
    ),
    S(
        "verify-size-option-before-buying",
        "Select the product's size and colour options before clicking buy.",
        "a product page has option menus",
        "the product has no options",
        "choose each option to match the request; check the page shows them; then buy",
        "The item page for the dress has a colour menu and a size menu, and I was asked for red in M.",
    ),
    S(
        "go-back-after-dead-end",
        "Return to the result list when a product page does not match, instead of buying it.",
        "the opened product lacks a required attribute",
        "the product matches",
        "note the mismatch; go back; open the next candidate",
        "The shoes I opened are only available in size 9 but the instruction asks for size 11.",
    ),
    # data cleaning
    S(
        "parse-dates-explicit-format",
        "Parse dates with an explicit format so 03/04 is not read as the wrong month.",
        "a column holds dates as text in a regional format",
        "dates are ISO 8601",
        "inspect samples; choose the format string; parse; check min and max",
        "The sales column has dates like 03/04/2023 and the monthly totals look shifted.",
    ),
    S(
        "deduplicate-by-key",
        "Remove duplicate records by a business key, keeping the most recent.",
        "the same customer or order appears several times",
        "rows are genuinely distinct",
        "choose the key; sort by update time; keep the last per key; report how many were dropped",
        "Our customer table has the same email address on several rows with different phone numbers.",
    ),
    S(
        "handle-missing-values",
        "Decide explicitly how to treat missing values before computing statistics.",
        "a column has blanks, NaN or sentinel values like -999",
        "the data is complete",
        "count the missing; choose drop, fill or flag; document the choice",
        "Average age comes out negative because unknown ages were stored as -999.",
    ),
    S(
        "trim-whitespace-categories",
        "Normalise category labels (trim, case-fold) before grouping.",
        "a grouping shows near-identical categories",
        "labels are controlled values",
        "strip spaces; lowercase; map variants; regroup",
        "The report shows 'Paris', 'paris ' and 'PARIS' as three different cities.",
    ),
    S(
        "check-units-column",
        "Confirm the unit of each numeric column before combining datasets.",
        "two sources measure the same quantity",
        "one source only",
        "read the data dictionary; convert to one unit; spot-check ranges",
        "Merging the two weather files gives temperatures of both 20 and 68 for the same day.",
    ),
    # science world
    S(
        "measure-temperature-with-thermometer",
        "Use the thermometer on a substance to read its temperature before deciding.",
        "a task depends on whether something is hot, cold, melted or boiling",
        "the temperature is stated",
        "pick up the thermometer; use it on the substance; record the value",
        "Find out whether the liquid in the beaker is above 50 degrees Celsius.",
    ),
    S(
        "boil-water-procedure",
        "Boil a liquid by putting it in a heat-safe container on an activated heat source and waiting.",
        "a substance must change from liquid to gas",
        "it is already gas",
        "move the substance into a metal pot; put it on the stove; activate; wait and check",
        "Your task is to turn the water in the kitchen sink into steam.",
    ),
    S(
        "grow-plant-steps",
        "Grow a plant by planting a seed in soil in a pot and watering it over time.",
        "a task asks to grow a plant or produce fruit",
        "the plant is already grown",
        "put soil in a flower pot; plant the seed; water it; wait several steps; check",
        "Plant an orange seed and make it grow in the greenhouse.",
    ),
    S(
        "electrical-circuit-completion",
        "Close a circuit by connecting battery, wire and device terminals in a loop.",
        "a light bulb or motor must be powered",
        "the device is already on",
        "connect battery anode to the device; device to the wire; wire to the cathode; check the device",
        "Make the red light bulb on the workbench turn on using the battery and wires there.",
    ),
    S(
        "classify-living-things",
        "Decide if an object is living or non-living by checking it grows, reproduces and needs energy.",
        "a task asks to sort objects into living and non-living",
        "categories are given",
        "list candidate objects; apply the criteria; move each into the matching box",
        "Focus on an animal in the room and put it into the green box.",
    ),
    # logic puzzles
    S(
        "truth-teller-liar-cases",
        "Solve truth-teller and liar puzzles by assuming each case and checking consistency.",
        "speakers either always tell the truth or always lie",
        "statements can be mixed",
        "assume one speaker truthful; derive the others; discard contradictions",
        "A says B always lies; B says A and C are of the same kind; who tells the truth?",
    ),
    S(
        "constraint-grid-elimination",
        "Fill logic grid puzzles by marking impossibilities and propagating them.",
        "people must be matched to attributes under clues",
        "a single unknown is asked",
        "draw the grid; mark each clue; propagate eliminations; repeat until unique",
        "Four friends each own a different pet and live on different floors; clues link them.",
    ),
    S(
        "river-crossing-state-search",
        "Solve crossing puzzles by listing safe states and searching moves systematically.",
        "items must be ferried across with constraints on who can be left together",
        "there is no constraint",
        "encode each bank's state; list legal moves; breadth-first search to the goal",
        "A farmer must take a wolf, a goat and a cabbage over a river with a small boat.",
    ),
    S(
        "syllogism-validity",
        "Judge a syllogism by its form (draw the sets), not by whether the conclusion sounds true.",
        "a conclusion is drawn from two general premises",
        "premises are numeric facts",
        "draw sets for each term; place the premises; test whether the conclusion must hold",
        "All roses are flowers; some flowers fade quickly; so some roses fade quickly. Is this valid?",
    ),
    S(
        "sudoku-candidate-elimination",
        "Solve Sudoku by tracking candidates per cell and eliminating by row, column and box.",
        "a 9x9 number grid must be completed",
        "the grid is not Sudoku",
        "write candidates; remove by row, column, box; fill singles; repeat",
        "Complete this 9x9 grid where every row, column and 3x3 block holds 1 to 9.",
    ),
    # email and calendar tools
    S(
        "confirm-recipient-before-sending",
        "Look up and confirm the exact recipient address before sending an email.",
        "an email must be sent to a person named only by name",
        "the address is given",
        "search contacts; confirm the address; then send",
        "Send the quarterly numbers to Maria from finance.",
    ),
    S(
        "check-calendar-conflicts",
        "Check for existing events before creating a meeting.",
        "a meeting must be scheduled at a proposed time",
        "only a reminder is set",
        "list events in the slot; propose another time if busy; then create",
        "Book a one-hour meeting with the design team on Tuesday at 3 pm.",
    ),
    S(
        "summarize-thread-action-items",
        "Extract action items with owners and dates when summarising an email thread.",
        "a long thread must be summarised",
        "a single short message",
        "read every message; list decisions; list action items with owner and due date",
        "Give me the gist of the forty-message thread about the product launch.",
    ),
    S(
        "attach-files-check",
        "Verify that files mentioned as attached are actually attached before sending.",
        "the message says 'attached' or 'see attachment'",
        "no file is mentioned",
        "scan the draft for attachment words; attach the file; confirm the attachment list",
        "Draft a reply saying I've attached the signed contract.",
    ),
    S(
        "reply-all-caution",
        "Reply only to the needed people, not everyone on a large thread.",
        "a reply is written to a message with many recipients",
        "the thread is one-to-one",
        "decide who needs the reply; remove the rest; send",
        "Tell Sam I can join, in the thread that has the whole company in copy.",
    ),
    # geometry
    S(
        "area-units-squared",
        "Square the unit conversion factor when converting areas.",
        "an area is converted between units",
        "lengths are converted",
        "convert the length factor; square it; multiply the area",
        "A room measures 12 square metres; how many square centimetres is that?",
    ),
    S(
        "pythagorean-right-triangle",
        "Use a^2 + b^2 = c^2 for the sides of right triangles.",
        "a right triangle's missing side is asked",
        "the triangle has no right angle",
        "identify the hypotenuse; substitute; take the square root",
        "A ladder 5 m long leans against a wall with its foot 3 m away; how high does it reach?",
    ),
    S(
        "circle-circumference-vs-area",
        "Keep circumference (2 pi r) and area (pi r^2) apart and use the radius, not the diameter.",
        "a circle's size is asked from a diameter or radius",
        "no circle is involved",
        "halve the diameter to get r; choose the formula; compute",
        "A round table is 1.2 m across; how much cloth covers its top exactly?",
    ),
    S(
        "similar-triangles-ratio",
        "Use equal side ratios of similar triangles to find unknown lengths.",
        "shadows, maps or scaled figures relate lengths",
        "figures are not similar",
        "match corresponding sides; set up the ratio; solve",
        "A 2 m pole casts a 3 m shadow while a tree casts a 15 m shadow; how tall is the tree?",
    ),
    S(
        "volume-of-composite-solids",
        "Split a composite solid into simple solids and add their volumes.",
        "a shape is a cylinder with a cone, a box with a prism, and so on",
        "the solid is simple",
        "split the solid; compute each volume; add or subtract",
        "A silo is a cylinder 10 m high with a cone 3 m high on top, radius 2 m; what does it hold?",
    ),
    # probability
    S(
        "independent-events-multiply",
        "Multiply probabilities of independent events that must all happen.",
        "several independent trials must all succeed",
        "events depend on each other",
        "check independence; multiply the probabilities; state the result",
        "What is the chance of rolling a six three times in a row with a fair die?",
    ),
    S(
        "complement-at-least-one",
        "Compute 'at least one' probabilities as 1 minus the chance of none.",
        "a question asks for the chance of at least one success",
        "exactly one is asked",
        "compute the probability of zero successes; subtract from one",
        "If I buy five tickets each with a 10 percent chance to win, what are my odds of winning something?",
    ),
    S(
        "conditional-probability-bayes",
        "Apply Bayes' rule with base rates for test results.",
        "a test's accuracy and a condition's prevalence are given",
        "no test is involved",
        "write prior, sensitivity, false positive rate; compute the posterior; sanity-check",
        "A disease affects 1 in 1000 and a test is 99 percent accurate; I tested positive, how worried should I be?",
    ),
    S(
        "combinations-vs-permutations",
        "Decide whether order matters before counting arrangements.",
        "a question counts ways to choose or arrange items",
        "only one way exists",
        "ask if order matters; use nPr if it does and nCr if not; compute",
        "How many different 3-person committees can be formed from 10 volunteers?",
    ),
    S(
        "expected-value-sum",
        "Compute expected values as the sum of outcomes times probabilities.",
        "a bet or game's average payoff is asked",
        "outcomes are certain",
        "list outcomes and probabilities; multiply; add",
        "A game pays 10 dollars with probability 0.2 and costs 3 to play; is it worth playing?",
    ),
    # reading comprehension
    S(
        "quote-evidence-from-passage",
        "Answer from the passage and quote the sentence that supports the answer.",
        "a question is about a given text",
        "general knowledge is asked",
        "find the sentence; quote it; answer in its words",
        "According to the article, why did the town move its market to the river?",
    ),
    S(
        "multi-hop-bridge-entity",
        "Answer two-step questions by first finding the bridge entity, then the final fact.",
        "a question links two facts through an unnamed entity",
        "one lookup suffices",
        "identify the intermediate entity; look it up; answer the second hop",
        "In which country was the director of the film Jaws born?",
    ),
    S(
        "answer-format-exact",
        "Give the answer in exactly the requested format (number only, yes/no, one word).",
        "the question specifies the answer format",
        "free text is welcome",
        "read the format request; strip explanations; output only the value",
        "Reply with a single number: how many moons does Mars have?",
    ),
    S(
        "negation-in-question",
        "Watch for NOT or EXCEPT in questions and invert the selection.",
        "a question asks which option is not true or is the exception",
        "no negation appears",
        "underline the negation; evaluate each option; pick the false one",
        "Which of these is NOT a mammal: whale, bat, penguin, horse?",
    ),
    S(
        "temporal-order-of-events",
        "Put events on a timeline before answering before/after questions.",
        "a passage describes several events out of order",
        "a single event",
        "list events with dates or cues; sort; answer from the order",
        "Did the bridge open before or after the war, according to the passage?",
    ),
    # translation
    S(
        "preserve-named-entities",
        "Keep names of people, brands and places unchanged when translating.",
        "a text with proper names is translated",
        "names have official translations",
        "mark the names; translate the rest; reinsert the names unchanged",
        "Translate into German: 'Apple opened a new store near the Golden Gate Bridge.'",
    ),
    S(
        "formal-register-match",
        "Match the formality of the source (Sie/du, vous/tu) in translations.",
        "a message's politeness level matters",
        "the text is technical",
        "judge the register; choose the pronoun and forms; keep it consistent",
        "Translate the bank's letter to a customer into French.",
    ),
    S(
        "idiom-not-literal",
        "Translate idioms by meaning, not word by word.",
        "a phrase is figurative",
        "the text is literal",
        "recognise the idiom; find an equivalent; fall back to plain meaning",
        "Translate 'it's raining cats and dogs' into Spanish.",
    ),
    S(
        "number-format-localization",
        "Adapt decimal separators, dates and currencies to the target locale.",
        "a text has numbers, dates or prices and a different target locale",
        "no numbers",
        "identify each number; apply target conventions; check units",
        "Translate '1,234.50 USD due on 03/04/2024' for a German invoice.",
    ),
    S(
        "gender-agreement-check",
        "Check gender and number agreement of adjectives and articles in the target language.",
        "translating into a gendered language",
        "target has no grammatical gender",
        "find the noun's gender; agree article and adjectives; reread",
        "Translate 'the beautiful houses are old' into Italian.",
    ),
    # customer support
    S(
        "verify-identity-before-account-changes",
        "Confirm the customer's identity before changing account details.",
        "a caller asks to change an address, password or payment method",
        "a general question",
        "ask for the verification data; check it; then make the change",
        "A customer on the phone wants the delivery address on their account changed.",
    ),
    S(
        "refund-policy-window",
        "Check the purchase date against the refund window before promising a refund.",
        "a customer asks for their money back",
        "the issue is a repair",
        "find the order date; compare with the policy window; offer refund or alternatives",
        "A customer wants their money back for headphones bought seven weeks ago.",
    ),
    S(
        "escalate-after-two-failures",
        "Escalate to a specialist after two failed troubleshooting attempts.",
        "standard fixes did not solve the problem twice",
        "first contact",
        "record what was tried; open an escalation ticket; tell the customer what happens next",
        "We have restarted the router twice with the customer and the internet is still down.",
    ),
    S(
        "collect-order-number-first",
        "Ask for the order number before investigating a delivery problem.",
        "a customer reports a missing or late package",
        "no order is involved",
        "ask for the order number; look it up; then answer",
        "My package never arrived, can you help?",
    ),
    S(
        "apologize-and-summarize-resolution",
        "Close a support case with an apology and a summary of what was done.",
        "a support conversation is ending",
        "the case is still open",
        "apologise for the trouble; summarise the fix; state next steps",
        "The replacement card has been issued; wrap up the chat with the customer.",
    ),
    # security
    S(
        "no-secrets-in-logs",
        "Keep API keys and passwords out of logs and error messages.",
        "code logs requests, headers or configuration",
        "no secrets are handled",
        "redact known secret fields; log only prefixes; review log statements",
        "Our debug output prints the full request headers including Authorization.",
    ),
    S(
        "validate-user-input-paths",
        "Reject user-supplied file paths that escape the allowed folder.",
        "a web handler opens files named by the user",
        "paths are fixed",
        "resolve the path; check it is inside the base folder; refuse otherwise",
        "The download endpoint takes ?file=../../etc/passwd and returns it.",
    ),
    S(
        "least-privilege-tokens",
        "Give each service a token with only the permissions it needs.",
        "a new integration needs credentials",
        "a human account is meant",
        "list the required scopes; create a scoped token; store it in the secret manager",
        "The reporting job uses the admin key to read one table.",
    ),
    S(
        "parameterized-queries",
        "Build SQL with parameters, never by string formatting user input.",
        "user input ends up in a SQL statement",
        "the query is constant",
        "replace string formatting with placeholders; pass parameters; test with a quote",
        "A name with an apostrophe like O'Brien breaks our search page and looks injectable.",
    ),
    S(
        "verify-tls-certificates",
        "Keep TLS certificate verification on and fix the trust store instead.",
        "HTTPS calls fail with certificate errors",
        "plain HTTP on localhost",
        "do not pass verify=False; install the CA bundle; retry",
        "requests raises SSLError, and a colleague suggests verify=False to make it work.",
    ),
)


def skill_text(spec: Spec, topic_index: int) -> str:
    steps = "\n".join(f"{i}. {step[0].upper()}{step[1:]}." for i, step in enumerate(spec.steps, 1))
    return (
        f"---\nname: {spec.name}\ndescription: {json.dumps(spec.description)}\n"
        f'metadata:\n  wikiskill-round: "{topic_index % 7 + 1}"\n---\n\n'
        f"## When to Apply\nUse this when {spec.when}.\n\n"
        f"## When NOT to Apply\nSkip it when {spec.not_when}.\n\n"
        f"## Instructions\n{steps}\n"
        f"{len(spec.steps) + 1}. Before answering, re-read the task and confirm the result fits what was asked.\n"
    )


def ordered_specs() -> list[Spec]:
    """Round-robin over the 20 topics, so any prefix mixes topics."""
    topics = [SPECS[i : i + 5] for i in range(0, len(SPECS), 5)]
    return [topic[k] for k in range(5) for topic in topics]


def workspace_skills(size: int) -> list[Skill]:
    return [parse_skill(skill_text(spec, i)) for i, spec in enumerate(ordered_specs()[:size])]


def token_counter() -> tuple[Callable[[str], int], str]:
    """cl100k_base through tiktoken with litellm's bundled tokenizer file, else chars / 4."""
    spec = importlib.util.find_spec("litellm")
    if spec and spec.submodule_search_locations and "TIKTOKEN_CACHE_DIR" not in os.environ:
        bundled = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"
        os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)
    cache = Path(os.environ.get("TIKTOKEN_CACHE_DIR", "/nonexistent"))
    if importlib.util.find_spec("tiktoken") and (cache / hashlib.sha1(CL100K_URL.encode()).hexdigest()).is_file():
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base")
        return (lambda text: len(encoding.encode(text))), "cl100k_base tokens (tiktoken)"
    return (lambda text: len(text) // 4), "approximate tokens (characters / 4; tiktoken's cl100k_base not available)"


def system_prompt(skills: list[Skill], mode: str, task: str = "") -> str:
    block = render_skills(skills, SkillsSettings(mode=mode), task)  # type: ignore[arg-type]
    return render("agent_interactive", skills_block=block)


@dataclass
class SizeResult:
    size: int
    full: int
    index: int
    tool_schema: int
    retrieve_mean: float
    retrieve_max: int
    recall: dict[int, float]
    tasks: int


def measure(size: int, count: Callable[[str], int]) -> SizeResult:
    skills = workspace_skills(size)
    names = {skill.name for skill in skills}
    labelled = [(spec.task, spec.name) for spec in SPECS if spec.name in names]
    retrieve_tokens = [count(system_prompt(skills, "retrieve", task)) for task, _ in labelled]
    hits = {k: 0 for k in RECALL_AT}
    for task, needed in labelled:
        ranked = [s.name for s in retrieve(skills, task, max(RECALL_AT), token_budget=10**9)]
        for k in RECALL_AT:
            hits[k] += needed in ranked[:k]
    return SizeResult(
        size=size,
        full=count(system_prompt(skills, "full")),
        index=count(system_prompt(skills, "index")),
        tool_schema=count(json.dumps(LOAD_SKILL_TOOL)),
        retrieve_mean=statistics.mean(retrieve_tokens),
        retrieve_max=max(retrieve_tokens),
        recall={k: hits[k] / len(labelled) for k in RECALL_AT},
        tasks=len(labelled),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="workspace sizes (max 100)")
    sizes = parser.parse_args().sizes
    if max(sizes) > len(SPECS) or min(sizes) < 1:
        parser.error(f"sizes must be between 1 and {len(SPECS)}")
    count, unit = token_counter()
    defaults = SkillsSettings()
    print(f"System prompt of the interactive task agent, in {unit}.")
    print(
        f"retrieve: top_k={defaults.top_k}, token_budget={defaults.token_budget} (wikiskill.yaml defaults); "
        f"no-skills prompt = {count(render('agent_interactive', skills_block=''))}"
    )
    rows = [measure(size, count) for size in sizes]
    header = (
        f"{'skills':>6} {'full':>8} {'index':>8} {'+tool':>6} {'retrieve':>14} "
        + " ".join(f"{'R@' + str(k):>6}" for k in RECALL_AT)
        + f" {'tasks':>6}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        recall = " ".join(f"{row.recall[k]:>6.2f}" for k in RECALL_AT)
        retrieve_cell = f"{row.retrieve_mean:.0f} (max {row.retrieve_max})"
        print(
            f"{row.size:>6} {row.full:>8} {row.index:>8} {row.tool_schema:>6} "
            f"{retrieve_cell:>14} {recall} {row.tasks:>6}"
        )
    print(
        "full/index/retrieve = tokens of the system prompt; +tool = the load_skill schema that index mode "
        "also sends;\nretrieve = mean (max) over the labelled tasks; R@k = share of tasks whose needed skill "
        "is among retrieve's top k."
    )


if __name__ == "__main__":
    main()
