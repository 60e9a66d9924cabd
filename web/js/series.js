/*
 * series.js - one metric across hosts, from pmproxy's series store (the
 * /series/* API: Redis, filled by pmproxy from a pmlogger farm's archives).
 *
 * Pick a metric (the form in #series, or ?series=NAME): one line per host
 * (per host and instance for a metric with instances) over the last
 * minutes, a counter as its rate and an instant as its value, units scaled
 * as in the rest of the page; a histogram (NAME.hist, "lo-hi" instances)
 * as a heatmap per host.  Each refresh (the page's interval, 1 s at least):
 *	/series/query?expr=NAME		the metric's series: one per host
 *	/series/descs, /series/instances, /series/labels?series=...
 *					semantics, units, instance names and
 *					the hostname label, when the series
 *					change or every 30 s
 *	/series/values?series=...&start=-Nsec	the samples
 * Not asked: /series/metrics (pmproxy 6.0.3 crashes on it when it has no
 * Redis); the metric list comes from the live part of the page.  pmproxy
 * without a series store never answers /series/*: after 10 s the view
 * says so and tries again.
 *
 * For people and for tests, each line is a row of #series-legend with
 * data-host, data-instance, data-series, data-value (the newest sample),
 * data-raw (the newest value drawn), data-t (its time, ms) and
 * data-points (how many drawn); Stap.seriesView.lines has every point.
 * The metric's help, when the live part of the page knows it, shows on
 * hover over the chart.
 */
(function (Stap) {
	'use strict';

	const el = Stap.el;
	const META_EVERY_MS = 30000;
	const MAX_LINES = 24;

	/* samples [[t ms, v]] in time order -> what is drawn: a counter's rate per second */
	function drawn(samples, counter) {
		if (!counter)
			return samples.map(([t, v]) => [t, v]);
		const out = [];
		for (let i = 1; i < samples.length; i++) {
			const [t0, v0] = samples[i - 1], [t1, v1] = samples[i];
			out.push([t1, t1 > t0 && v1 >= v0 ? (v1 - v0) * 1000 / (t1 - t0) : null]);
		}
		return out;
	}

	class SeriesView {
		constructor() {
			this.form = document.getElementById('series-form');
			this.names = document.getElementById('series-names');
			this.note = document.getElementById('series-note');
			this.canvas = document.getElementById('series-chart');
			this.legend = document.querySelector('#series-legend tbody');
			this.heat = document.getElementById('series-heat');
			this.form.addEventListener('submit', (ev) => { ev.preventDefault(); this.pick(); });
			this.known = '';
			this.lines = [];
		}

		/* a new pmproxy, interval or metric (s: the dashboard's settings) */
		reset(s) {
			clearTimeout(this.timer);
			this.s = s;
			this.rest = new Stap.Rest(s.url, '');
			this.metric = s.series || '';
			this.form.metric.value = this.metric;
			this.window = Number(this.form.window.value) || 300;
			this.ids = '';
			this.metaAt = 0;
			this.info = new Map();
			this.instNames = new Map();
			this.lines = [];
			this.generation = (this.generation || 0) + 1;
			this.draw([], null);
			this.say(this.metric ? 'asking pmproxy\'s series store for ' + this.metric + '\u2026' :
				'choose a metric to see it across hosts', 'idle');
			if (this.metric)
				this.kick();
		}

		pick() {
			const metric = this.form.metric.value.trim();

			try {
				localStorage.setItem('pmstap.series', metric);
			} catch (e) { /* file:// may refuse storage */ }
			const q = new URLSearchParams(location.search);
			q.set('series', metric);
			history.replaceState(null, '', '?' + q.toString());
			this.reset(Object.assign({}, this.s, { series: metric }));
		}

		/* the stap.* metrics the live part of the page knows (meta: name -> desc),
		 * offered in the form; their help is the chart's on hover */
		offer(meta) {
			this.meta = meta;
			const list = [...meta.keys()].filter((n) => !/^stap\.(control|scripts\.(output|line|source))\b/.test(n)).sort();
			const key = list.join(' ');

			if (key !== this.known) {
				this.known = key;
				this.names.replaceChildren(...list.map((n) => el('option', { value: n })));
			}
		}

		say(text, state) {
			this.note.textContent = text;
			this.note.dataset.state = state;
		}

		kick() {
			const gen = this.generation;

			this.tick().catch((e) => {
				if (gen === this.generation)
					this.failed(e);
			}).finally(() => {
				if (gen === this.generation)
					this.timer = setTimeout(() => this.kick(), Math.max(this.s.interval, 1000));
			});
		}

		failed(e) {
			const where = 'pmproxy at ' + this.s.url;

			if (e.kind === 'unreachable' && /no answer/.test(e.message))
				this.say(where + ' did not answer /series/ (' + e.message + '): it has no series store ' +
					'([pmseries] and [redis] in pmproxy.conf), or Redis is down; trying again', 'error');
			else
				this.say(where + ': ' + e.message + '; trying again', e.kind === 'unreachable' ? 'unreachable' : 'error');
			this.ids = '';
		}

		async tick() {
			const gen = this.generation;
			const ids = await this.rest.raw('/series/query', { expr: this.metric });

			if (!Array.isArray(ids) || ids.some((i) => typeof i !== 'string'))
				throw new Stap.RestError('pmapi', 'not a list of series from /series/query');
			if (!ids.length) {
				this.draw([], null);
				this.say('no series of ' + this.metric + ' in pmproxy\'s store: is the farm\'s pmlogger ' +
					'logging it, and pmproxy loading the archives ([discover])?', 'empty');
				return;
			}
			const key = ids.slice().sort().join(',');
			if (key !== this.ids || Date.now() - this.metaAt > META_EVERY_MS)
				await this.loadMeta(ids);
			this.ids = key;
			const vals = await this.rest.raw('/series/values', { series: ids.join(','), start: '-' + this.window + 'sec' });
			if (gen !== this.generation)
				return;
			this.show(this.group(vals));
		}

		/* per series: host (its hostname label), units, counter or not; instance names */
		async loadMeta(ids) {
			const series = ids.join(',');
			const descs = await this.rest.raw('/series/descs', { series });
			const info = new Map();

			for (const d of descs)
				info.set(d.series, { units: Stap.units.parse(d.units), counter: d.semantics === 'counter',
					indom: d.indom !== 'none', source: d.source || '', host: null });
			const withInst = ids.filter((i) => info.has(i) && info.get(i).indom);
			const insts = withInst.length ? await this.rest.raw('/series/instances', { series: withInst.join(',') }) : [];
			const names = new Map(), first = new Map();
			for (const i of insts) {
				names.set(i.instance, i.name);
				if (!first.has(i.series))
					first.set(i.series, i.instance);
			}
			/* the hostname label: on the series, or (with instances) on an instance's series */
			const owner = new Map(ids.map((i) => [first.get(i) || i, i]));
			const labels = await this.rest.raw('/series/labels', { series: [...owner.keys()].join(',') });
			for (const l of labels) {
				const sid = owner.get(l.series);
				if (sid && info.has(sid) && l.labels && l.labels.hostname)
					info.get(sid).host = String(l.labels.hostname);
			}
			for (const [sid, i] of info)
				i.host = i.host || 'source ' + (i.source || sid).slice(0, 8);
			this.info = info;
			this.instNames = names;
			this.metaAt = Date.now();
		}

		/* /series/values -> lines { series, host, instance, samples [[t ms, v]] }, by host, instance */
		group(vals) {
			const by = new Map();

			for (const v of vals) {
				const inst = v.instance || '';
				const k = v.series + '/' + inst;
				if (!by.has(k))
					by.set(k, { series: v.series, inst, samples: [] });
				if (inst && !this.instNames.has(inst))
					this.metaAt = 0;	/* a new instance: its name at the next tick */
				by.get(k).samples.push([Number(v.timestamp), Number(v.value)]);
			}
			const lines = [];
			for (const g of by.values()) {
				const i = this.info.get(g.series);
				if (!i)
					continue;
				g.samples.sort((a, b) => a[0] - b[0]);
				lines.push({ series: g.series, host: i.host, instance: g.inst ? this.instNames.get(g.inst) ||
					'#' + g.inst.slice(0, 8) : '', counter: i.counter, units: i.units, samples: g.samples });
			}
			return lines.sort((a, b) => a.host.localeCompare(b.host) ||
				a.instance.localeCompare(b.instance, undefined, { numeric: true }));
		}

		show(lines) {
			const hist = /\.hist$/.test(this.metric) && lines.length > 0 &&
				lines.every((l) => Stap.bucketEnds(l.instance));
			const hosts = new Set(lines.map((l) => l.host));

			if (!lines.length) {
				this.lines = [];
				this.draw([], null);
				this.say(this.metric + ': ' + this.info.size + ' series, but no samples in the last ' +
					this.window / 60 + ' min', 'empty');
				return;
			}
			for (const l of lines)
				l.points = drawn(l.samples, l.counter);
			const shown = hist ? lines : lines.slice(0, MAX_LINES);
			this.lines = shown;
			this.draw(hist ? [] : shown, hist ? lines : null);
			const newest = Math.max(...lines.map((l) => l.samples.length ? l.samples[l.samples.length - 1][0] : 0));
			this.say(this.metric + ': ' + hosts.size + (hosts.size === 1 ? ' host' : ' hosts') + ', ' +
				(hist ? 'a heatmap per host' : shown.length + (shown.length === 1 ? ' line' : ' lines') +
					(lines.length > shown.length ? ' (' + (lines.length - shown.length) + ' more not drawn)' : '')) +
				(lines[0] && lines[0].counter ? ', as rates' : '') + ', the last ' + this.window / 60 + ' min' +
				(newest > 0 ? ', newest sample ' + Stap.clock(newest / 1000) : ''), 'ok');
		}

		/* lines: one line each; hist: lines of buckets, a heatmap per host */
		draw(lines, hist) {
			const fmt = (l) => (x) => Stap.units.format(x, l.units, l.counter);

			const m = this.meta && this.meta.get(this.metric);
			this.canvas.title = m ? Stap.helpText(m) : this.metric || '';
			this.heat.title = this.canvas.title;
			this.canvas.hidden = !!hist;
			this.canvas.dataset.metric = this.metric || '';
			this.canvas.dataset.lines = String(lines.length);
			this.canvas.dataset.drawn = String(Stap.drawLines(this.canvas,
				lines.map((l) => ({ label: l.host, points: l.points.map(([t, v]) => [t / 1000, v]) })),
				{ window: this.window, format: lines[0] ? fmt(lines[0]) : String }));
			this.legend.replaceChildren(...lines.map((l, i) => this.row(l, i, fmt(l))));
			this.legend.parentNode.hidden = !lines.length;
			this.heat.replaceChildren();
			if (hist)
				this.heatmaps(hist);
		}

		row(l, i, fmt) {
			const last = l.samples[l.samples.length - 1] || [0, null];
			const p = l.points[l.points.length - 1] || [0, null];
			const value = Stap.units.format(last[1], l.units, false);

			return el('tr', { dataset: { host: l.host, instance: l.instance, series: l.series,
				value: last[1] === null ? '' : String(last[1]), raw: p[1] === null ? '' : String(p[1]),
				t: String(p[0]), points: String(l.points.length) } },
			el('td', { style: 'color:' + Stap.colour(i) }, '\u25a0'),
			el('td', { class: 'key' }, l.host), el('td', { class: 'key' }, l.instance),
			el('td', { class: 'value' }, p[1] === null ? '-' : fmt(p[1])), el('td', { class: 'value' }, value));
		}

		/* a heatmap per host: a column per sample, a row per bucket, its value drawn (a counter: per second) */
		heatmaps(lines) {
			const byHost = new Map();

			for (const l of lines) {
				if (!byHost.has(l.host))
					byHost.set(l.host, []);
				byHost.get(l.host).push(l);
			}
			for (const [host, ls] of byHost) {
				const cols = new Map();
				for (const l of ls)
					for (const [t, v] of l.points) {
						if (!cols.has(t))
							cols.set(t, { t: t / 1000, cells: new Map() });
						if (v !== null)
							cols.get(t).cells.set(l.instance, v);
					}
				const columns = [...cols.values()].sort((a, b) => a.t - b.t);
				const canvas = el('canvas', { class: 'heatmap', dataset: { metric: this.metric, host } });
				const lo = el('span', { class: 'axis-lo' }), hi = el('span', { class: 'axis-hi' });
				this.heat.append(el('div', { class: 'series-heat', dataset: { host } },
					el('div', { class: 'count' }, host),
					el('div', { class: 'heat-wrap' }, el('div', { class: 'axis' }, hi, lo), canvas)));
				const got = Stap.drawHeatmap(canvas, columns, { slots: columns.length });
				canvas.dataset.painted = String(got.painted);
				canvas.dataset.rows = got.rows.join(' ');
				canvas.dataset.columns = String(columns.length);
				hi.textContent = got.rows.length ? got.rows[got.rows.length - 1] : '';
				lo.textContent = got.rows.length ? got.rows[0] : '';
			}
		}
	}

	Stap.SeriesView = SeriesView;
})(window.Stap = window.Stap || {});
