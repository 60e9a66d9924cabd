/*
 * dashboard.js - the page: which pmproxy and host, the polling loop, the
 * metadata of every stap.* metric, and a section per script.
 *
 * Each tick (every second by default):
 *	1. metadata, when due (every 10 s, or when a script or metric came
 *	   or went): /pmapi/children?prefix=stap, then /pmapi/metric of each
 *	   subtree; panels are made from it, nothing per script by hand;
 *	2. values: one /pmapi/fetch for stap.scripts/probes/info and one per
 *	   script (a script's metrics share a timestamp, so rates agree);
 *	   instance names from /pmapi/indom when a new id shows up;
 *	3. the tables, each script's panels and output log, and the
 *	   registration form's outcome (register.js).
 * A failure says what failed in the status line (#conn, data-state:
 * ok, unreachable, pmcd, error), greys the page (stale) and is retried at
 * the next tick; a metric or script that goes is marked gone, and its
 * panel removed a while later; one that comes back is shown again.
 */
(function (Stap) {
	'use strict';

	const el = Stap.el;
	const P = Stap.panels;
	const STATIC = new Set(['control', 'scripts', 'probes', 'info']);
	const STAT_SUFFIX = new Set(['count', 'sum', 'min', 'max', 'avg', 'hist']);
	const META_EVERY_MS = 10000;
	const GONE_KEEP_MS = 30000;
	/* not fetched: events (pmproxy shows null), the records' parameter, per-client outcomes */
	const SKIP = /^stap\.(scripts\.(output|line|source)$|control\.)/;

	function settings() {
		const q = new URLSearchParams(location.search);
		const saved = (k) => { try { return localStorage.getItem('pmstap.' + k); } catch (e) { return null; } };
		const http = /^https?:$/.test(location.protocol);
		const dflt = http ? location.protocol + '//' + location.hostname + ':44322' : 'http://localhost:44322';

		return {
			url: q.get('pmproxy') || saved('pmproxy') || dflt,
			host: q.get('host') ?? saved('host') ?? '',
			interval: Number(q.get('interval') || saved('interval') || 1000),
			series: q.get('series') ?? saved('series') ?? '',
		};
	}

	function norm(m) {
		return {
			name: m.name, pmid: m.pmid, indom: m.indom ?? null, type: m.type, sem: m.sem,
			units: Stap.units.parse(m.units), oneline: m['text-oneline'] || '', help: m['text-help'] || '',
		};
	}

	function scriptOf(name) {
		const s = name.split('.')[1];

		return STATIC.has(s) ? '' : s;
	}

	/* a panel's key: the global's name (a statistic's six metrics share one) */
	function panelKey(name) {
		const parts = name.split('.');

		if (parts.length >= 4 && STAT_SUFFIX.has(parts[parts.length - 1]))
			return parts.slice(0, -1).join('.');
		return name;
	}

	class ScriptSection {
		constructor(name) {
			this.name = name;
			this.panels = new Map();	/* key -> { panel, sig, gone } */
			this.badge = el('span', { class: 'badge' });
			this.banner = el('div', { class: 'banner', hidden: '' });
			this.grid = el('div', { class: 'grid' });
			this.log = new P.LogPanel(name);
			this.root = el('section', { class: 'script', id: 'script-' + name, dataset: { script: name } },
				el('h2', {}, name, ' ', this.badge), this.banner, this.grid, this.log.root);
		}

		say(text, kind) {
			this.banner.hidden = !text;
			this.banner.textContent = text || '';
			this.banner.dataset.kind = kind || '';
		}

		/* metas: Map key -> [desc...] of this script's metrics now */
		layout(metas) {
			for (const [key, list] of metas) {
				const sig = list.map((m) => m.name + ' ' + m.type + ' ' + m.sem + ' ' + m.indom + ' ' + m.units.text).sort().join('|');
				const have = this.panels.get(key);
				if (have && have.sig === sig) {
					this.ungone(have);
					continue;
				}
				const panel = this.make(key, list);
				if (have)
					have.panel.root.replaceWith(panel.root);
				else
					this.grid.append(panel.root);
				this.panels.set(key, { panel, sig, gone: 0 });
			}
			for (const [key, p] of this.panels)
				if (!metas.has(key))
					this.gone(key, p);
			const order = [...this.panels.keys()].sort().map((k) => this.panels.get(k).panel.root);
			if (order.some((e, i) => this.grid.children[i] !== e))
				this.grid.replaceChildren(...order);
		}

		make(key, list) {
			if (list.length > 1 || list[0].name !== key) {
				const metas = {};
				for (const m of list)
					metas[m.name.slice(key.length + 1)] = m;
				return new P.StatsPanel(key, metas, this.name);
			}
			const m = list[0];
			return m.indom === null ? new P.ScalarPanel(m, this.name) : new P.ArrayPanel(m, this.name);
		}

		gone(key, p) {
			const now = Date.now();

			if (!p.gone) {
				p.gone = now;
				p.panel.root.classList.add('gone');
				p.panel.root.dataset.gone = 'true';
				p.panel.root.prepend(el('div', { class: 'gone-note' },
					key + ' is no longer served: its script stopped, changed or was removed'));
			} else if (now - p.gone > GONE_KEEP_MS) {
				p.panel.root.remove();
				this.panels.delete(key);
			}
		}

		ungone(p) {
			if (!p.gone)
				return;
			p.gone = 0;
			p.panel.root.classList.remove('gone');
			delete p.panel.root.dataset.gone;
			const note = p.panel.root.querySelector('.gone-note');
			if (note)
				note.remove();
		}

		update(values, t) {
			for (const p of this.panels.values())
				if (!p.gone)
					p.panel.update(values, t);
		}
	}

	class Dashboard {
		constructor() {
			this.conn = document.getElementById('conn');
			this.main = document.getElementById('main');
			this.sectionsEl = document.getElementById('scripts');
			this.form = document.getElementById('settings');
			this.form.addEventListener('submit', (ev) => { ev.preventDefault(); this.apply(); });
			this.scriptsTable = new Stap.ScriptsTable(document.getElementById('scripts-table'));
			this.probesTable = new Stap.ProbesTable(document.getElementById('probes-table'));
			this.registration = new Stap.Registration(this);
			this.series = Stap.seriesView = new Stap.SeriesView();
			this.reset(settings());
		}

		reset(s) {
			this.s = s;
			this.form.pmproxy.value = s.url;
			this.form.host.value = s.host;
			if (![...this.form.interval.options].some((o) => o.value === String(s.interval)))
				this.form.interval.append(el('option', { value: String(s.interval) }, s.interval / 1000 + ' s'));
			this.form.interval.value = String(s.interval);
			this.rest = new Stap.Rest(s.url, s.host);
			this.meta = new Map();
			this.metaAt = 0;
			this.needMeta = true;
			this.indoms = new Map();
			this.sections = new Map();
			this.sectionsEl.replaceChildren();
			this.scriptsTable.body.replaceChildren();
			this.scriptsTable.rows.clear();
			this.probesTable.body.replaceChildren();
			this.generation = (this.generation || 0) + 1;
			this.state('connecting', 'connecting to pmproxy at ' + s.url + '\u2026');
			this.series.reset(s);
		}

		apply() {
			const s = {
				url: this.form.pmproxy.value.trim(),
				host: this.form.host.value.trim(),
				interval: Number(this.form.interval.value) || 1000,
				series: this.series.metric,
			};
			try {
				localStorage.setItem('pmstap.pmproxy', s.url);
				localStorage.setItem('pmstap.host', s.host);
				localStorage.setItem('pmstap.interval', String(s.interval));
			} catch (e) { /* file:// may refuse storage */ }
			const q = new URLSearchParams({ pmproxy: s.url, host: s.host, interval: s.interval, series: s.series });
			history.replaceState(null, '', '?' + q.toString());
			this.reset(s);
			this.kick();
		}

		state(kind, text) {
			this.conn.dataset.state = kind;
			this.conn.textContent = text;
			this.main.classList.toggle('stale', kind !== 'ok' && kind !== 'connecting');
		}

		start() {
			this.kick();
		}

		kick() {
			clearTimeout(this.timer);
			const gen = this.generation;
			this.tick().finally(() => {
				if (gen === this.generation)
					this.timer = setTimeout(() => this.kick(), this.s.interval);
			});
		}

		async tick() {
			const gen = this.generation;

			try {
				if (this.needMeta || Date.now() - this.metaAt > META_EVERY_MS)
					await this.loadMeta();
				const got = await this.fetchAll();
				if (gen !== this.generation)
					return;
				this.show(got);
			} catch (e) {
				if (gen === this.generation)
					this.failed(e);
			}
		}

		failed(e) {
			const where = 'pmproxy at ' + this.s.url;

			if (e.kind === 'unreachable')
				this.state('unreachable', where + ' is unreachable (' + e.message + '); trying again');
			else if (e.kind === 'pmcd')
				this.state('pmcd', where + ' answers, but pmcd on ' + (this.s.host || 'its host') +
					' is unreachable (' + e.message + '); trying again');
			else
				this.state('error', where + ': ' + e.message + '; trying again');
			this.rest.context = e.kind === 'pmapi' ? this.rest.context : null;
			this.needMeta = true;
		}

		async loadMeta() {
			const kids = await this.rest.children('stap');
			const subtrees = (kids.nonleaf || []).concat(kids.leaf || []);
			const lists = await Promise.all(subtrees.map((k) =>
				this.rest.metrics('stap.' + k).then((j) => j.metrics || [], (e) => {
					if (e.kind === 'unreachable')
						throw e;
					return null;	/* keep what we knew of it */
				})));
			const meta = new Map();
			subtrees.forEach((k, i) => {
				if (lists[i] === null) {
					for (const [n, m] of this.meta)
						if (n.startsWith('stap.' + k + '.'))
							meta.set(n, m);
					return;
				}
				for (const m of lists[i])
					if (m.success !== false && m.name)
						meta.set(m.name, norm(m));
			});
			this.meta = meta;
			this.metaAt = Date.now();
			this.needMeta = false;
		}

		/* names to fetch, by script ('' for the static ones) */
		groups() {
			const g = new Map([['', []]]);

			for (const [name, m] of this.meta) {
				if (SKIP.test(name) || m.type === 'event')
					continue;
				const s = scriptOf(name);
				if (!g.has(s))
					g.set(s, []);
				g.get(s).push(name);
			}
			return g;
		}

		async fetchAll() {
			const groups = [...this.groups()].filter(([, names]) => names.length);
			const out = await Promise.all(groups.map(([s, names]) => this.fetchGroup(s, names)));
			return new Map(out);
		}

		async fetchGroup(script, names) {
			const j = await this.rest.fetch(names);
			const values = new Map();

			for (const v of j.values || [])
				values.set(v.name, await this.named(v));
			if (names.some((n) => !values.has(n)))
				this.needMeta = true;	/* a metric went: look again */
			return [script, { t: j.timestamp, values }];
		}

		/* {name, instances: [{instance: id, value}]} -> Map instance name -> value */
		async named(v) {
			const m = this.meta.get(v.name);
			const out = new Map();

			if (!m || m.indom === null) {
				for (const i of v.instances)
					out.set(i.instance === null ? '' : '#' + i.instance, i.value);
				return out;
			}
			let names = this.indoms.get(m.indom);
			if (!names || v.instances.some((i) => !names.has(i.instance))) {
				const j = await this.rest.indom(m.indom);
				names = new Map((j.instances || []).map((i) => [i.instance, i.name]));
				this.indoms.set(m.indom, names);
			}
			for (const i of v.instances)
				out.set(names.get(i.instance) ?? '#' + i.instance, i.value);
			return out;
		}

		show(got) {
			const base = got.get('') || { values: new Map(), t: 0 };
			const scripts = this.scriptsTable.update(base.values, this.meta);

			this.probesTable.update(base.values, base.t, this.meta);
			this.registration.enabled((base.values.get('stap.info.registration') || new Map()).get(''));
			this.registration.update(this.meta, base.values);
			this.layout(scripts, base.values);
			this.series.offer(this.meta);
			for (const [name, sec] of this.sections) {
				const g = got.get(name);
				if (g)
					sec.update(g.values, g.t);
				const text = (base.values.get('stap.scripts.output_text') || new Map()).get(name);
				const lines = (base.values.get('stap.scripts.output_lines') || new Map()).get(name);
				sec.log.update(text, lines);
			}
			const n = scripts.length;
			this.state('ok', 'pmproxy ' + this.s.url + ', host ' + (this.rest.hostname || this.s.host || 'local') +
				': ' + n + (n === 1 ? ' script' : ' scripts') + ', updated ' + Stap.clock(base.t));
		}

		/* a section per script in stap.scripts.status, in name order */
		layout(scripts, values) {
			const status = values.get('stap.scripts.status') || new Map();
			const error = values.get('stap.scripts.error') || new Map();
			const byScript = new Map();

			for (const [name, m] of this.meta) {
				const s = scriptOf(name);
				if (!s)
					continue;
				if (!byScript.has(s))
					byScript.set(s, new Map());
				const key = panelKey(name), g = byScript.get(s);
				if (!g.has(key))
					g.set(key, []);
				g.get(key).push(m);
			}
			for (const s of new Set([...scripts, ...byScript.keys()])) {
				let sec = this.sections.get(s);
				if (!sec) {
					sec = new ScriptSection(s);
					this.sections.set(s, sec);
				}
				sec.layout(byScript.get(s) || new Map());
				this.describe(sec, status.get(s), error.get(s));
			}
			for (const [s, sec] of this.sections)
				if (!status.has(s) && !byScript.has(s))
					this.describe(sec, undefined, '');
			const order = [...this.sections.keys()].sort();
			if (order.some((s, i) => this.sectionsEl.children[i] !== this.sections.get(s).root))
				this.sectionsEl.replaceChildren(...order.map((s) => this.sections.get(s).root));
		}

		describe(sec, st, error) {
			sec.root.dataset.status = st || 'gone';
			sec.badge.textContent = st || 'gone';
			sec.badge.className = 'badge status-' + (st || 'gone');
			if (st === undefined) {
				sec.goneAt = sec.goneAt || Date.now();
				sec.say('script ' + sec.name + ' is no longer served: it was removed or deregistered', 'gone');
				if (Date.now() - sec.goneAt > GONE_KEEP_MS) {
					sec.root.remove();
					this.sections.delete(sec.name);
				}
				return;
			}
			sec.goneAt = 0;
			if (st === 'running')
				sec.say('', '');
			else
				sec.say('script ' + sec.name + ' is ' + st + (error ? ': ' + error : ''), st);
		}
	}

	Stap.Dashboard = Dashboard;
	window.addEventListener('DOMContentLoaded', () => {
		Stap.dashboard = new Dashboard();
		Stap.dashboard.start();
	});
})(window.Stap = window.Stap || {});
