"""format=xlsx on /v1/fleet: the plan as a workbook finance can edit (openpyxl).

Every figure a price or a rate makes is a live formula over input cells: prices, hours, PUE,
electricity and the like sit on the Inputs sheet (a pool's own card on its pool's sheet),
shaded, under names the formulas use (`=ROUND(GPUs*OnDemandUsdPerHour*HoursPerMonth,2)`), so
changing one moves every total. What the planner decided (GPUs per pool and period, their
utilization, the procurement split) is written as values: changing a price recomputes what
that plan costs, not the plan. Money is rounded to the cent where the JSON answer rounds it,
so the workbook's totals are the answer's.

Sheets: Inputs; one per pool (Fleet, or Prefill pool and Decode pool, or each pool of a mix);
one per forecast period table (Periods, or one per pool); Procurement with pricing=optimize.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from openpyxl import Workbook
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.worksheet import Worksheet

from app.planning.fleet.answer import PlannedFleet
from app.planning.requests import FleetRequest
from app.sizing.cost import HOURS_PER_MONTH
from app.sizing.vocabulary import FleetLayout

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
INPUT_FILL = PatternFill("solid", fgColor="FFF2CC")
BOLD = Font(bold=True)
USD = "#,##0.00"
NUMBER = "#,##0.####"
MAX_SHEET_NAME = 31  # Excel's limit
INPUT_NOTE = "input: change it"


class Labelled:
    """A sheet of rows `label | value or formula | unit`: where each key's value sits."""

    def __init__(self, book: Book, title: str) -> None:
        self.sheet = book.new_sheet(title)
        self.book = book
        self.cells: dict[str, str] = {}

    def heading(self, text: str) -> None:
        row = self.sheet.max_row + (2 if self.sheet["A1"].value is not None else 0)
        self.sheet.cell(max(row, 1), 1, text).font = BOLD

    def put(self, key: str, label: str, value: Any, unit: str = "", *, given: bool = False, money: bool = False) -> str:
        """A row; `given` marks an input cell. The absolute reference of its value."""
        row = self.sheet.max_row + 1 if self.sheet["A1"].value is not None else 1
        self.sheet.cell(row, 1, label)
        cell = self.sheet.cell(row, 2, value)
        self.sheet.cell(row, 3, f"{unit}; {INPUT_NOTE}" if given and unit else INPUT_NOTE if given else unit)
        cell.number_format = USD if money else NUMBER
        if given:
            cell.fill = INPUT_FILL
        self.cells[key] = f"'{self.sheet.title}'!$B${row}"
        return self.cells[key]

    def name(self, key: str, name: str) -> str:
        """A workbook-wide name for the key's cell, for formulas to refer to it by."""
        self.book.workbook.defined_names[name] = DefinedName(name, attr_text=self.cells[key])
        return name


class Book:
    def __init__(self) -> None:
        self.workbook = Workbook()
        for sheet in list(self.workbook.worksheets):  # the default sheet: every sheet here is named
            self.workbook.remove(sheet)

    def new_sheet(self, title: str) -> Worksheet:
        name, suffix = title[:MAX_SHEET_NAME], 2
        while name in self.workbook.sheetnames:
            name = f"{title[: MAX_SHEET_NAME - 4]} {suffix}"
            suffix += 1
        sheet: Worksheet = self.workbook.create_sheet(name)
        for column, width in (("A", 44), ("B", 18), ("C", 34)):
            sheet.column_dimensions[column].width = width
        return sheet

    def bytes(self) -> bytes:
        out = io.BytesIO()
        self.workbook.save(out)
        return out.getvalue()


def workbook(answer: PlannedFleet, body: dict[str, Any], request: FleetRequest) -> bytes:
    """The answer (`body`: its wire form, which the JSON answer is) as an .xlsx workbook (see
    the module docstring)."""
    book = Book()
    inputs = Labelled(book, "Inputs")
    inputs.heading("Inputs: change a shaded cell and every formula follows")
    finance = request.finance
    given = [
        (
            "HoursPerMonth",
            "Billed hours per month",
            body.get("hours_per_month", request.traffic.hours_per_month),
            "hours",
            False,
        ),
        ("PUE", "Power usage effectiveness", finance.pue, "facility power over the GPUs'", False),
        ("GridGCo2PerKwh", "Grid carbon intensity", finance.grid_g_co2_per_kwh, "gCO2e per kWh", False),
    ]
    if finance.ownership is not None:
        owned = finance.ownership
        given += [
            ("AmortizationMonths", "Amortization", owned.amortization_months, "months", False),
            ("ElectricityUsdPerKwh", "Electricity", owned.electricity_usd_per_kwh, "USD per kWh", True),
            (
                "HostingUsdPerKwMonth",
                "Hosting",
                owned.hosting_usd_per_kw_month,
                "USD per kW of board power a month",
                True,
            ),
        ]
    if finance.api_usd_per_million_input is not None:
        given += [
            (
                "ApiUsdPerMillionInput",
                "Hosted API: input tokens",
                finance.api_usd_per_million_input,
                "USD per million",
                True,
            ),
            (
                "ApiUsdPerMillionOutput",
                "Hosted API: output tokens",
                finance.api_usd_per_million_output,
                "USD per million",
                True,
            ),
        ]
    for name, label, value, unit, money in given:
        inputs.put(name, label, value, unit, given=True, money=money)
        inputs.name(name, name)
    if answer.layout == FleetLayout.DISAGGREGATED:
        _disaggregated(book, body)
    elif answer.layout == FleetLayout.MIXED:
        _mix(book, body)
    elif answer.chosen is not None:
        _aggregated(book, inputs, body, request)
    return book.bytes()


# --------------------------------------------------------------------------- one kind of replica

PRICE_INPUTS = (
    ("on_demand_usd_per_hour", "OnDemandUsdPerHour", "On-demand price", "USD per GPU-hour", True),
    ("reserved_1y_usd_per_hour", "Reserved1yUsdPerHour", "Committed price, 1 year", "USD per GPU-hour", True),
    ("reserved_3y_usd_per_hour", "Reserved3yUsdPerHour", "Committed price, 3 years", "USD per GPU-hour", True),
    ("spot_usd_per_hour", "SpotUsdPerHour", "Spot price", "USD per GPU-hour", True),
    (
        "spot_interruptions_per_hour",
        "SpotInterruptionsPerHour",
        "Spot interruption rate",
        "chance an hour is lost",
        False,
    ),
    ("purchase_usd", "PurchaseUsd", "Purchase price", "USD per GPU", True),
    ("power_w", "PowerW", "Board power", "W", False),
    ("idle_power_w", "IdlePowerW", "Idle power", "W", False),
)


def _aggregated(book: Book, inputs: Labelled, body: dict[str, Any], request: FleetRequest) -> None:
    prices = body.get("prices") or {}
    inputs.heading(f"Prices and power of one {body.get('gpu')} card")
    for key, name, label, unit, money in PRICE_INPUTS:
        inputs.put(name, label, prices.get(key), unit, given=True, money=money)
        inputs.name(name, name)
    fleet = Labelled(book, "Fleet")
    fleet.heading(f"{body.get('model')} on {body.get('gpu')}: the plan (values) and what it costs (formulas)")
    fleet.put("gpus", "GPUs (whole cards)", body.get("gpus_total"))
    fleet.name("gpus", "GPUs")
    fleet.put("utilization", "Average utilization", body.get("fleet_utilization"))
    fleet.name("utilization", "Utilization")
    fleet.put("requests", "Average requests per second", body.get("requests_per_s"))
    fleet.name("requests", "RequestsPerSecond")
    fleet.put("prompt", "Prompt tokens per request", request.inputs.prompt_tokens)
    fleet.name("prompt", "PromptTokens")
    fleet.put("output", "Output tokens per request", request.inputs.output_tokens)
    fleet.name("output", "OutputTokens")
    fleet.heading("Renting on demand")
    fleet.put("monthly", "Monthly cost", "=ROUND(GPUs*OnDemandUsdPerHour*HoursPerMonth,2)", "USD", money=True)
    fleet.name("monthly", "MonthlyCostUsd")
    fleet.heading("Energy")
    _energy_rows(fleet, "GPUs", "Utilization", "PowerW", "IdlePowerW", "RequestsPerSecond*OutputTokens")
    if request.finance.ownership is not None:
        _ownership_rows(fleet, len(body.get("periods") or []))
    if request.finance.api_usd_per_million_input is not None:
        fleet.heading("A hosted API for the same traffic")
        fleet.put(
            "hosted",
            "Hosted API monthly cost",
            "=ROUND(RequestsPerSecond*3600*HoursPerMonth*(PromptTokens*ApiUsdPerMillionInput"
            "+OutputTokens*ApiUsdPerMillionOutput)/10^6,2)",
            "USD",
            money=True,
        )
    periods = body.get("periods") or []
    if periods:
        _periods(book, "Periods", periods, "OnDemandUsdPerHour", "PowerW", "IdlePowerW")
    procurement = body.get("procurement")
    if procurement:
        _procurement(book, procurement)


def _energy_rows(sheet: Labelled, gpus: str, utilization: str, power: str, idle: str, tokens_per_s: str) -> None:
    known = f"COUNT({power},{idle})=2"
    sheet.put(
        "power",
        "Power per GPU: idle + (board - idle) x utilization",
        f'=IF({known},{idle}+({power}-{idle})*MIN(1,MAX(0,{utilization})),"")',
        "W",
    )
    per_gpu = sheet.cells["power"]
    sheet.put("kwh", "Energy per month", f'=IF({known},{gpus}*{per_gpu}/1000*HoursPerMonth*PUE,"")', "kWh")
    kwh = sheet.cells["kwh"]
    sheet.put(
        "wh_per_million",
        "Energy per million output tokens",
        f'=IF(AND({known},({tokens_per_s})>0),{kwh}*1000/(({tokens_per_s})*3600*HoursPerMonth)*10^6,"")',
        "Wh",
    )
    sheet.put("co2e", "CO2e per month", f'=IF(AND({known},COUNT(GridGCo2PerKwh)=1),{kwh}*GridGCo2PerKwh/1000,"")', "kg")


def _ownership_rows(fleet: Labelled, periods: int) -> None:
    """Owning the fleet against renting: the same fleet's monthly cost, or with a forecast the
    average of its periods' (the Periods sheet's monthly costs), as the JSON answer compares."""
    fleet.heading("Owning the fleet instead")
    kwh = fleet.cells["kwh"]
    rows = [
        ("purchase", "Purchase (month 0)", "=ROUND(GPUs*PurchaseUsd,2)"),
        ("amortization", "Amortization per month", "=ROUND(GPUs*PurchaseUsd/AmortizationMonths,2)"),
        ("electricity", "Electricity per month", f"=ROUND({kwh}*ElectricityUsdPerKwh,2)"),
        ("hosting", "Hosting per month", "=ROUND(GPUs*PowerW/1000*HostingUsdPerKwMonth,2)"),
    ]
    for key, label, formula in rows:
        fleet.put(key, label, formula, "USD", money=True)
    cell = fleet.cells
    fleet.put("running", "Running per month", f"=ROUND({cell['electricity']}+{cell['hosting']},2)", "USD", money=True)
    fleet.put("owned", "Owned monthly cost", f"=ROUND({cell['amortization']}+{cell['running']},2)", "USD", money=True)
    if periods:
        monthly = _column_range("Periods", PERIOD_COLUMNS, "monthly", periods)
        fleet.put(
            "rented", "Rented monthly cost (the forecast's average)", f"=ROUND(AVERAGE({monthly}),2)", "USD", money=True
        )
    else:
        fleet.put("rented", "Rented monthly cost (the same fleet)", "=MonthlyCostUsd", "USD", money=True)
    rent = fleet.cells["rented"]
    fleet.put(
        "break_even",
        "Break-even against renting",
        f'=IF({rent}>{cell["running"]},{cell["purchase"]}/({rent}-{cell["running"]}),"never")',
        "months",
    )


# --------------------------------------------------------------------------- tables


class Table:
    """A sheet with a header row and one row per item; columns by key."""

    FIRST = 4  # the first item's row

    def __init__(self, book: Book, title: str, heading: str, columns: Sequence[tuple[str, str]]) -> None:
        self.sheet = book.new_sheet(title)
        self.sheet.cell(1, 1, heading).font = BOLD
        self.columns = {key: index + 1 for index, (key, _) in enumerate(columns)}
        for index, (_, label) in enumerate(columns, 1):
            self.sheet.cell(3, index, label).font = BOLD
            self.sheet.column_dimensions[get_column_letter(index)].width = max(12, len(label) + 2)
        self.first = self.FIRST

    def at(self, key: str, row: int) -> str:
        return f"{get_column_letter(self.columns[key])}{row}"

    def write(self, row: int, key: str, value: Any, *, money: bool = False) -> None:
        cell = self.sheet.cell(row, self.columns[key], value)
        cell.number_format = USD if money else NUMBER

    def total(self, row: int, keys: Sequence[str], last: int) -> None:
        self.sheet.cell(row, 1, "Total").font = BOLD
        for key in keys:
            column = get_column_letter(self.columns[key])
            self.write(row, key, f"=ROUND(SUM({column}{self.first}:{column}{last}),2)", money=True)


PERIOD_COLUMNS = (
    ("period", "Period"),
    ("requests_per_day", "Requests/day"),
    ("peak_to_average", "Peak ratio"),
    ("gpus", "GPUs"),
    ("utilization", "Utilization"),
    ("monthly", "Monthly cost, USD"),
    ("kwh", "Energy, kWh/month"),
)


def _column_range(title: str, columns: Sequence[tuple[str, str]], key: str, rows: int) -> str:
    """The cells of one column of a Table sheet's `rows` rows, as a formula names them."""
    letter = get_column_letter([name for name, _ in columns].index(key) + 1)
    return f"'{title}'!${letter}${Table.FIRST}:${letter}${Table.FIRST + rows - 1}"


def _periods(book: Book, title: str, periods: Sequence[dict[str, Any]], price: str, power: str, idle: str) -> None:
    """A forecast's periods: each period's fleet (values) and its monthly cost and energy."""
    table = Table(
        book,
        title,
        "Each forecast period: its fleet (values) and what it costs and draws a month (formulas)",
        PERIOD_COLUMNS,
    )
    for offset, period in enumerate(periods):
        row = table.first + offset
        table.write(row, "period", period["period"])
        table.write(row, "requests_per_day", period["requests_per_day"])
        table.write(row, "peak_to_average", period["peak_to_average"])
        table.write(row, "gpus", period["gpus_total"])
        gpus = table.at("gpus", row)
        table.write(row, "monthly", f"=ROUND({gpus}*{price}*HoursPerMonth,2)", money=True)
        table.write(row, "utilization", period.get("fleet_utilization"))
        u = table.at("utilization", row)
        table.write(
            row,
            "kwh",
            f"=IF(AND(COUNT({power},{idle})=2,COUNT({u})=1),{gpus}*({idle}+({power}-{idle})*MIN(1,MAX(0,{u})))"
            f'/1000*HoursPerMonth*PUE,"")',
        )


def _procurement(book: Book, procurement: dict[str, Any]) -> None:
    """The split of pricing=optimize: GPUs by how they are had (values) and their costs (formulas)."""
    table = Table(
        book,
        "Procurement",
        f"Committed, on-demand and spot GPUs over the {procurement['horizon_months']}-month horizon "
        f"(periods of {procurement['period_months']} months)",
        [
            ("period", "Period"),
            ("months", "Months"),
            ("needed", "GPUs needed"),
            ("protected", "Of which protected"),
            ("c1y", "Committed 1y"),
            ("c3y", "Committed 3y"),
            ("on_demand", "On demand"),
            ("spot", "Spot"),
            ("committed_cost", "Committed, USD"),
            ("on_demand_cost", "On demand, USD"),
            ("spot_cost", "Spot, USD"),
            ("cost", "Period cost, USD"),
            ("all_on_demand", "All on demand, USD"),
        ],
    )
    periods = procurement["periods"]
    for offset, period in enumerate(periods):
        row = table.first + offset
        terms = period["committed_gpus_by_term"]
        for key, value in (
            ("period", period["period"]),
            ("months", procurement["period_months"]),
            ("needed", period["gpus_needed"]),
            ("protected", period["gpus_protected"]),
            ("c1y", terms.get("1y", 0)),
            ("c3y", terms.get("3y", 0)),
            ("on_demand", period["on_demand_gpus"]),
            ("spot", period["spot_gpus"]),
        ):
            table.write(row, key, value)
        hours = f"{table.at('months', row)}*HoursPerMonth"
        # A commitment bills every hour of its months: at least the calendar's 730 a month.
        every_hour = f"{table.at('months', row)}*MAX(HoursPerMonth,{HOURS_PER_MONTH})"
        c1, c3 = table.at("c1y", row), table.at("c3y", row)
        formulas = {
            "committed_cost": f"=ROUND(({c1}*N(Reserved1yUsdPerHour)+{c3}*N(Reserved3yUsdPerHour))*{every_hour},2)",
            "on_demand_cost": f"=ROUND({table.at('on_demand', row)}*OnDemandUsdPerHour*{hours},2)",
            "spot_cost": f"=ROUND({table.at('spot', row)}*N(SpotUsdPerHour)*{hours},2)",
            "cost": f"=ROUND({table.at('committed_cost', row)}+{table.at('on_demand_cost', row)}"
            f"+{table.at('spot_cost', row)},2)",
            "all_on_demand": f"=ROUND({table.at('needed', row)}*OnDemandUsdPerHour*{hours},2)",
        }
        for key, formula in formulas.items():
            table.write(row, key, formula, money=True)
    last = table.first + len(periods) - 1
    totals = last + 1
    table.total(totals, ["committed_cost", "on_demand_cost", "spot_cost", "cost", "all_on_demand"], last)
    summary = totals + 2
    cost, all_on_demand = table.at("cost", totals), table.at("all_on_demand", totals)
    for offset, (label, formula) in enumerate(
        (
            ("Horizon cost, USD", f"={cost}"),
            ("All on demand, USD", f"={all_on_demand}"),
            ("Saving, USD", f"=ROUND({all_on_demand}-{cost},2)"),
            ("Monthly cost, USD", f"=ROUND({cost}/{procurement['horizon_months']},2)"),
        )
    ):
        table.sheet.cell(summary + offset, 1, label).font = BOLD
        cell = table.sheet.cell(summary + offset, 2, formula)
        cell.number_format = USD
    book.workbook.defined_names["ProcurementCostUsd"] = DefinedName(
        "ProcurementCostUsd", attr_text=f"'{table.sheet.title}'!${table.at('cost', totals)[0]}${totals}"
    )


# --------------------------------------------------------------------------- pools


def _pool_sheet(book: Book, title: str, pool: dict[str, Any], prefix: str) -> tuple[Labelled, dict[str, str]]:
    """One pool's card (its own input cells) and its fleet."""
    sheet = Labelled(book, title)
    sheet.heading(f"{title}: {pool.get('gpu')} (its card's price and power are inputs)")
    prices = pool.get("prices") or {}
    sheet.put(
        "price", "On-demand price", prices.get("on_demand_usd_per_hour"), "USD per GPU-hour", given=True, money=True
    )
    sheet.put("power", "Board power", prices.get("power_w"), "W", given=True)
    sheet.put("idle", "Idle power", prices.get("idle_power_w"), "W", given=True)
    names = {
        key: sheet.name(key, f"{prefix}{name}")
        for key, name in (("price", "OnDemandUsdPerHour"), ("power", "PowerW"), ("idle", "IdlePowerW"))
    }
    sheet.put("gpus", "GPUs (whole cards)", pool.get("gpus_total"))
    sheet.put("utilization", "Average utilization", pool.get("fleet_utilization"))
    gpus, utilization = sheet.cells["gpus"], sheet.cells["utilization"]
    sheet.put("monthly", "Monthly cost", f"=ROUND({gpus}*{names['price']}*HoursPerMonth,2)", "USD", money=True)
    known = f"COUNT({names['power']},{names['idle']},{utilization})=3"
    sheet.put(
        "kwh",
        "Energy per month",
        f"=IF({known},{gpus}*({names['idle']}+({names['power']}-{names['idle']})*MIN(1,MAX(0,{utilization})))"
        f'/1000*HoursPerMonth*PUE,"")',
        "kWh",
    )
    return sheet, names


def _totals(book: Book, pools: Sequence[Labelled]) -> None:
    if not pools:
        return
    fleet = Labelled(book, "Fleet")
    fleet.heading("The pools together")
    fleet.put(
        "monthly", "Monthly cost", "=ROUND(" + "+".join(p.cells["monthly"] for p in pools) + ",2)", "USD", money=True
    )
    fleet.put("kwh", "Energy per month", "=" + "+".join(f"N({p.cells['kwh']})" for p in pools), "kWh")


def _disaggregated(book: Book, body: dict[str, Any]) -> None:
    sheets = []
    for key, title, prefix in (("prefill_pool", "Prefill pool", "Prefill"), ("decode_pool", "Decode pool", "Decode")):
        pool = body.get(key)
        if pool is None:
            continue
        sheet, names = _pool_sheet(book, title, pool, prefix)
        sheets.append(sheet)
        periods = [
            {**p, "gpus_total": p.get(f"{key.split('_')[0]}_gpus_total"), "utilization": None}
            for p in body.get("periods") or []
        ]
        if periods:
            _periods(book, f"{title} periods", periods, names["price"], names["power"], names["idle"])
    _totals(book, sheets)


def _mix(book: Book, body: dict[str, Any]) -> None:
    mix = body.get("mix") or {}
    sheets = []
    for index, pool in enumerate(mix.get("pools") or [], 1):
        sheet, names = _pool_sheet(book, f"Pool {index} {pool.get('gpu')}", pool, f"Pool{index}")
        sheets.append(sheet)
        periods = [
            {**p, "gpus_total": p["pool_gpus_total"][index - 1], "utilization": None} for p in mix.get("periods") or []
        ]
        if periods:
            _periods(book, f"Pool {index} periods", periods, names["price"], names["power"], names["idle"])
    _totals(book, sheets)
