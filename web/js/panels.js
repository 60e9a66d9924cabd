/*
 * panels.js - one panel per exported global of a script, drawn from the
 * metric's own metadata (type, semantics, units, help):
 *
 *	ScalarPanel	a long: counters as a rate, instants as the value,
 *			over time; a string: its value
 *	ArrayPanel	one instance per key: a top-N table sorted by value
 *			(rate for counters) and the top series charted; keys
 *			that are stacks (backtrace(), ubacktrace()): a flame
 *			graph of the values instead of the chart (flame.js)
 *	StatsPanel	a statistic, stap.S.G.{count,sum,min,max,avg,hist}:
 *			count (a rate), avg, min, max, and the histogram's
 *			buckets ("lo-hi" instances) as a heatmap over time;
 *			per key: a table sorted by count; keyed by stacks,
 *			a flame graph of the sums too
 *	LogPanel	a script's output (stap.scripts.output_text), newest
 *			first, with the lines the page never got counted
 *
 * Every panel is a <div class="panel" data-metric="NAME">; values carry
 * data-raw (the number shown, unscaled) so that tests read the DOM.
 * update(values, t) gets this fetch's values by metric name (each a
 * Map instance name -> value; a scalar's instance name is ''), and the
 * fetch's timestamp in seconds.
 */
(function (Stap) {
	'use strict';

	const el = Stap.el;
	const WINDOW_S = 300;		/* seconds of history charted */
	const TOP_N = 10;
	const TOP_CHARTED = 5;
	const LOG_LINES = 500;

	/* A counter's rate between two fetches: null at the first, or after a reset. */
	class Rates {
		constructor() {
			this.prev = new Map();
		}

		rate(key, v, t) {
			const p = this.prev.get(key);

			this.prev.set(key, { v, t });
			if (!p || t <= p.t || v < p.v)
				return null;
			return (v - p.v) / (t - p.t);
		}

		forget(keep) {
			for (const k of this.prev.keys())
				if (!keep.has(k))
					this.prev.delete(k);
		}
	}

	function trim(points, t) {
		while (points.length && points[0][0] < t - WINDOW_S)
			points.shift();
	}

	function shortName(name, script) {
		return name.slice(('stap.' + script + '.').length);
	}

	function header(m, script, extra) {
		return el('div', { class: 'panel-head', title: Stap.helpText(m) },
			el('span', { class: 'name' }, shortName(m.name, script)),
			el('span', { class: 'kind' }, extra || kindText(m)),
			el('span', { class: 'oneline' }, m.oneline || ''));
	}

	function kindText(m) {
		if (m.type === 'string')
			return 'string';
		return m.sem === 'counter' ? 'rate' : m.sem;
	}

	class ScalarPanel {
		constructor(m, script) {
			this.m = m;
			this.counter = m.sem === 'counter' && m.type !== 'string';
			this.rates = new Rates();
			this.points = [];
			this.value = el('span', { class: 'value', dataset: { metric: m.name } }, '-');
			this.canvas = m.type === 'string' ? null :
				el('canvas', { class: 'chart', dataset: { metric: m.name } });
			this.root = el('div', { class: 'panel scalar', dataset: { metric: m.name, sem: m.sem, type: m.type } },
				header(m, script), el('div', { class: 'big' }, this.value), this.canvas);
		}

		update(values, t) {
			const vals = values.get(this.m.name);
			const v = vals ? vals.get('') : undefined;

			if (v === undefined) {
				Stap.setValue(this.value, 'no value', null);
				return;
			}
			if (this.m.type === 'string') {
				Stap.setValue(this.value, v, v);
				return;
			}
			const shown = this.counter ? this.rates.rate('', v, t) : v;
			Stap.setValue(this.value, shown === null ? 'first sample' :
				Stap.units.format(shown, this.m.units, this.counter), shown);
			this.points.push([t, shown]);
			trim(this.points, t);
			Stap.drawLines(this.canvas, [{ points: this.points }], {
				window: WINDOW_S,
				format: (x) => Stap.units.format(x, this.m.units, this.counter),
			});
		}
	}

	class ArrayPanel {
		constructor(m, script) {
			this.m = m;
			this.counter = m.sem === 'counter' && m.type !== 'string';
			this.rates = new Rates();
			this.series = new Map();	/* instance -> points, for the charted ones */
			this.body = el('tbody');
			this.count = el('span', { class: 'count' });
			this.canvas = m.type === 'string' ? null :
				el('canvas', { class: 'chart', dataset: { metric: m.name } });
			this.legend = el('div', { class: 'legend' });
			this.root = el('div', { class: 'panel array', dataset: { metric: m.name, sem: m.sem, type: m.type } },
				header(m, script, (this.counter ? 'rate' : m.sem) + ' by key'),
				el('table', { class: 'top', dataset: { metric: m.name } },
					el('thead', {}, el('tr', {}, el('th', {}, 'key'),
						el('th', {}, this.counter ? 'per second' : 'value'))),
					this.body),
				this.count, this.canvas, this.legend);
		}

		rows(vals, t) {
			const rows = [];

			for (const [inst, v] of vals) {
				const shown = this.counter ? this.rates.rate(inst, v, t) : v;
				rows.push({ inst, v, shown });
			}
			this.rates.forget(new Set(vals.keys()));
			const key = (r) => (r.shown === null ? -Infinity : r.shown);
			if (this.m.type === 'string')
				rows.sort((a, b) => a.inst.localeCompare(b.inst));
			else
				rows.sort((a, b) => key(b) - key(a) || b.v - a.v);
			return rows;
		}

		update(values, t) {
			const vals = values.get(this.m.name) || new Map();
			const rows = this.rows(vals, t);
			const fmt = (x) => (this.m.type === 'string' ? x :
				Stap.units.format(x, this.m.units, this.counter));

			this.body.replaceChildren(...rows.slice(0, TOP_N).map((r) =>
				el('tr', { dataset: { instance: r.inst } },
					el('td', { class: 'key' }, r.inst),
					el('td', { class: 'value', dataset: { raw: r.shown === null ? '' : r.shown } },
						r.shown === null ? 'first sample' : fmt(r.shown)))));
			this.count.textContent = rows.length > TOP_N ?
				'top ' + TOP_N + ' of ' + rows.length + ' keys' : rows.length + ' keys';
			if (this.canvas && !this.stacks(vals))
				this.chart(rows, t);
		}

		/* keys that are stacks: a flame graph of the values, in place of the chart */
		stacks(vals) {
			const yes = vals.size > 0 && Stap.flame.isStacks(vals.keys());

			if (yes && !this.flame) {
				this.flame = new Stap.flame.Flame(this.m.name, (x) => Stap.units.format(x, this.m.units, false));
				this.root.insertBefore(this.flame.root, this.canvas);
			}
			if (this.flame)
				this.flame.root.hidden = !yes;
			this.canvas.hidden = this.legend.hidden = yes;
			this.root.classList.toggle('has-flame', yes);
			if (yes)
				this.flame.update(vals);
			return yes;
		}

		chart(rows, t) {
			const top = rows.slice(0, TOP_CHARTED).filter((r) => r.shown !== null);

			for (const r of top) {
				if (!this.series.has(r.inst))
					this.series.set(r.inst, []);
			}
			for (const [inst, points] of this.series) {
				const r = rows.find((x) => x.inst === inst);
				points.push([t, r ? r.shown : null]);
				trim(points, t);
			}
			const charted = top.map((r) => ({ label: r.inst, points: this.series.get(r.inst) }));
			for (const inst of [...this.series.keys()])
				if (!top.some((r) => r.inst === inst))
					this.series.delete(inst);
			Stap.drawLines(this.canvas, charted, {
				window: WINDOW_S,
				format: (x) => Stap.units.format(x, this.m.units, this.counter),
			});
			this.legend.replaceChildren(...charted.map((s, i) =>
				el('span', { style: 'color:' + Stap.colour(i) }, '\u25a0 ' + s.label)));
		}
	}

	Stap.panels = { Rates, ScalarPanel, ArrayPanel, shortName, header, trim, WINDOW_S, TOP_N, LOG_LINES };
})(window.Stap = window.Stap || {});
