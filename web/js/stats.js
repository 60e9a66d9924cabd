/*
 * stats.js - a statistic's panel (count, avg, min, max and a heatmap of
 * its histogram; keyed by stacks, a flame graph of the sums, or of the
 * counts when there is no sum) and a script's output log.  See panels.js.
 */
(function (Stap) {
	'use strict';

	const el = Stap.el;
	const P = Stap.panels;
	const HEAT_SLOTS = 120;		/* columns of the heatmap: one a fetch */

	/* "key::lo-hi" -> "lo-hi"; "lo-hi" as it is */
	function bucketOf(inst) {
		const i = inst.lastIndexOf('::');

		return i < 0 ? inst : inst.slice(i + 2);
	}

	class StatsPanel {
		/* metas: { count, sum, min, max, avg, hist }, those the global has */
		constructor(base, metas, script) {
			const any = metas.count || metas.avg || metas.hist || Object.values(metas)[0];

			this.base = base;
			this.metas = metas;
			this.keyed = any.indom !== null && any.indom !== undefined && !!(metas.count || metas.avg) &&
				(metas.count || metas.avg).indom !== null;
			this.vunits = (metas.avg || metas.min || metas.max || metas.sum || any).units;
			this.rates = new P.Rates();
			this.bucketPrev = new Map();
			this.columns = [];
			this.cells = {};
			const summary = el('div', { class: 'summary' });
			for (const s of ['count', 'avg', 'min', 'max']) {
				if (!metas[s] || this.keyed)
					continue;
				this.cells[s] = el('span', { class: 'value', dataset: { metric: base + '.' + s } }, '-');
				summary.append(el('span', { class: 'stat', title: Stap.helpText(metas[s]) }, s + ' ', this.cells[s]));
			}
			this.body = el('tbody');
			this.table = this.keyed ? el('table', { class: 'top', dataset: { metric: base } },
				el('thead', {}, el('tr', {}, ...['key', 'count/s', 'avg', 'min', 'max'].map((h) => el('th', {}, h)))),
				this.body) : null;
			this.root = el('div', { class: 'panel stats', dataset: { metric: base, kind: 'stats' } },
				P.header(Object.assign({}, any, { name: base }), script, 'statistics'), summary, this.table);
			if (metas.hist)
				this.makeHeatmap(metas.hist);
		}

		makeHeatmap(m) {
			this.canvas = el('canvas', { class: 'heatmap', dataset: { metric: m.name, columns: '0', painted: '0' } });
			this.hi = el('span', { class: 'axis-hi' });
			this.lo = el('span', { class: 'axis-lo' });
			this.root.append(el('div', { class: 'heat-wrap', title: Stap.helpText(m) },
				el('div', { class: 'axis' }, this.hi, this.lo), this.canvas));
			this.canvas.addEventListener('mousemove', (ev) => this.hover(ev));
		}

		update(values, t) {
			if (this.keyed) {
				this.updateTable(values, t);
				this.updateFlame(values);
			} else
				this.updateSummary(values, t);
			if (this.canvas)
				this.updateHeatmap(values.get(this.base + '.hist') || new Map(), t);
		}

		fmt(v) {
			return Stap.units.format(v, this.vunits, false);
		}

		updateSummary(values, t) {
			for (const [s, cell] of Object.entries(this.cells)) {
				const v = (values.get(this.base + '.' + s) || new Map()).get('');
				if (v === undefined) {
					Stap.setValue(cell, 'none', null);
				} else if (s === 'count') {
					const r = this.rates.rate('', v, t);
					Stap.setValue(cell, r === null ? v + ' so far' :
						Stap.units.format(r, this.metas.count.units, true), r);
				} else {
					Stap.setValue(cell, this.fmt(v), v);
				}
			}
		}

		updateTable(values, t) {
			const get = (s) => values.get(this.base + '.' + s) || new Map();
			const counts = get('count'), rows = [];

			for (const [inst, c] of counts)
				rows.push({ inst, c, r: this.rates.rate(inst, c, t) });
			this.rates.forget(new Set(counts.keys()));
			rows.sort((a, b) => (b.r ?? -1) - (a.r ?? -1) || b.c - a.c);
			this.body.replaceChildren(...rows.slice(0, P.TOP_N).map((row) =>
				el('tr', { dataset: { instance: row.inst } },
					el('td', { class: 'key' }, row.inst),
					el('td', { class: 'value', dataset: { raw: row.r ?? '' } },
						row.r === null ? row.c + ' so far' : Stap.units.format(row.r, this.metas.count.units, true)),
					...['avg', 'min', 'max'].map((s) => {
						const v = get(s).get(row.inst);
						return el('td', { class: 'value', dataset: { raw: v ?? '' } },
							v === undefined ? '-' : this.fmt(v));
					}))));
		}

		/* keys that are stacks: a flame graph of the sums (time, bytes: what the values weigh) */
		updateFlame(values) {
			const m = this.metas.sum || this.metas.count;
			const vals = values.get(m.name) || new Map();
			const yes = vals.size > 0 && Stap.flame.isStacks(vals.keys());

			if (yes && !this.flame) {
				this.flame = new Stap.flame.Flame(m.name, (x) => Stap.units.format(x, m.units, false));
				this.table.after(this.flame.root);
			}
			if (this.flame)
				this.flame.root.hidden = !yes;
			this.root.classList.toggle('has-flame', yes);
			if (yes)
				this.flame.update(vals);
		}

		/* this fetch's counts per bucket, less the last fetch's: one column */
		updateHeatmap(vals, t) {
			const now = new Map(), col = new Map();
			let any = this.bucketPrev.size > 0;

			for (const [inst, v] of vals) {
				const b = bucketOf(inst);
				now.set(b, (now.get(b) || 0) + v);
			}
			for (const [b, v] of now) {
				const d = v - (this.bucketPrev.get(b) || 0);
				if (d < 0)
					any = false;	/* the script restarted: start again */
				col.set(b, d);
			}
			this.bucketPrev = now;
			if (any) {
				this.columns.push({ t, cells: col });
				if (this.columns.length > HEAT_SLOTS)
					this.columns.shift();
			}
			const out = Stap.drawHeatmap(this.canvas, this.columns, { slots: HEAT_SLOTS });
			this.rowNames = out.rows;
			this.canvas.dataset.columns = String(this.columns.length);
			this.canvas.dataset.painted = String(out.painted);
			this.canvas.dataset.rows = String(out.rows.length);
			this.axis(out.rows);
		}

		axis(rows) {
			const ends = (name) => Stap.bucketEnds(name) || [name, name];

			if (!rows.length) {
				this.hi.textContent = this.lo.textContent = '';
				return;
			}
			const hi = ends(rows[rows.length - 1])[1], lo = ends(rows[0])[0];
			const show = (x) => (/inf/.test(x) ? x : this.fmt(Number(x)));
			this.hi.textContent = show(hi);
			this.lo.textContent = show(lo);
		}

		hover(ev) {
			if (!this.rowNames || !this.rowNames.length || !this.columns.length)
				return;
			const r = this.canvas.getBoundingClientRect();
			const ci = this.columns.length - HEAT_SLOTS + Math.floor((ev.clientX - r.left) / r.width * HEAT_SLOTS);
			const ri = this.rowNames.length - 1 - Math.floor((ev.clientY - r.top) / r.height * this.rowNames.length);
			const c = this.columns[ci], b = this.rowNames[ri];
			this.canvas.title = c && b ? Stap.clock(c.t) + '  ' + b + ': ' + (c.cells.get(b) || 0) : '';
		}
	}

	/*
	 * The lines of a fetch of output_text are numbered: the last is
	 * output_lines of the same fetch.  So the page knows which lines it
	 * never got (missed: before the first of a fetch and after the last it
	 * had) and which it has already (a new REST context gets the lines held
	 * again): nothing is skipped or shown twice without a word.
	 */
	class LogPanel {
		constructor(script) {
			this.script = script;
			this.last = 0;		/* the number of the newest line shown */
			this.missed = 0;
			this.missedEl = el('span', { class: 'missed', dataset: { metric: 'stap.scripts.output_missed', instance: script, missed: '0' } });
			this.lines = el('div', { class: 'log', dataset: { metric: 'stap.scripts.output_text', instance: script } });
			this.root = el('div', { class: 'panel logpanel', hidden: '', dataset: { metric: 'stap.scripts.output_text', instance: script } },
				el('div', { class: 'panel-head', title: 'stap.scripts.output_text: the script\'s printf output, newest first' },
					el('span', { class: 'name' }, 'output'), el('span', { class: 'kind' }, 'newest first'), this.missedEl),
				this.lines);
		}

		marker(text) {
			return el('div', { class: 'marker' }, text);
		}

		update(text, n) {
			if (typeof text !== 'string' || typeof n !== 'number')
				return;
			this.root.hidden = n === 0;	/* shown once the script has printed */
			const lines = text === '' ? [] : text.split('\n');
			if (lines.length && lines[lines.length - 1] === '')
				lines.pop();
			const frag = [];
			if (n < this.last) {
				frag.push(this.marker('the script\'s output started again'));
				this.last = 0;
			}
			const first = n - lines.length + 1;
			const gap = first - 1 - this.last;
			if (gap > 0) {
				this.missed += gap;
				frag.push(this.marker(gap + (gap === 1 ? ' line' : ' lines') + ' missed here'));
			}
			lines.forEach((line, i) => {
				if (first + i > this.last)
					frag.push(el('div', { class: 'line', dataset: { n: first + i } }, line));
			});
			this.last = Math.max(this.last, n);
			this.lines.prepend(...frag.reverse());
			while (this.lines.childElementCount > P.LOG_LINES)
				this.lines.lastElementChild.remove();
			this.missedEl.dataset.missed = String(this.missed);
			this.missedEl.textContent = this.missed ? this.missed + ' lines missed' : '';
			this.missedEl.title = 'lines printed that this page never got: they left pmdastap\'s ' +
				'output history (output_text_bytes) before the page asked';
		}
	}

	Stap.panels.StatsPanel = StatsPanel;
	Stap.panels.LogPanel = LogPanel;
})(window.Stap = window.Stap || {});
