/*
 * flame.js - a flame graph of an array keyed by stacks.
 *
 * pmdastap names a key that backtrace() or ubacktrace() gave by its
 * frames, outermost first, joined by ';', each "symbol+0xOFF" or "0xADDR"
 * (flamegraph.pl's folded stacks; pmdastap(1)).  Stap.flame.isStacks()
 * tells such instance names; a Flame draws them: frames of one function
 * at one place merged (offsets dropped), each as wide as the sum of the
 * values of the stacks through it over the sum of all, the outermost at
 * the bottom.  Frames are elements, not pixels, so that tests read them:
 * <div class="frame" data-frame="NAME" data-value="SUM" data-depth="D"
 * data-path="FUNC;...;NAME">,
 * in <div class="flame" data-metric="..." data-total="SUM">.  A click on a
 * frame shows only what is above it; a click on the bottom bar, all.
 */
(function (Stap) {
	'use strict';

	const el = Stap.el;
	const FRAME = /^([^\s;]+\+0x[0-9a-f]+|0x[0-9a-f]+)$/;
	const ROW_PX = 17;
	const MIN_PCT = 0.2;		/* narrower frames are left out */

	function frames(name) {
		return name.split(';');
	}

	/* Are these instance names stacks? All of them, and at least one. */
	function isStacks(names) {
		let n = 0;

		for (const name of names) {
			if (!frames(name).every((f) => FRAME.test(f)))
				return false;
			n++;
		}
		return n > 0;
	}

	/* "level2+0x1b" -> "level2" (an unknown "0x55d0..." stays) */
	function func(frame) {
		const plus = frame.lastIndexOf('+0x');

		return plus > 0 ? frame.slice(0, plus) : frame;
	}

	/* a frame: its function, the sum through it, what it calls, the functions from the root to it */
	function node(name, path) {
		return { name, value: 0, kids: new Map(), path };
	}

	/* vals: Map instance name -> number; the tree of frames under a root "all" */
	function tree(vals) {
		const root = node('all', []);

		for (const [stack, v] of vals) {
			if (!(v > 0))
				continue;
			let n = root;
			root.value += v;
			for (const f of frames(stack).map(func)) {
				if (!n.kids.has(f))
					n.kids.set(f, node(f, n.path.concat(f)));
				n = n.kids.get(f);
				n.value += v;
			}
		}
		return root;
	}

	function depth(n) {
		let d = 0;

		for (const k of n.kids.values())
			d = Math.max(d, depth(k));
		return d + 1;
	}

	/* a warm colour, the same for a name every time */
	function colour(name) {
		let h = 0;

		for (let i = 0; i < name.length; i++)
			h = (h * 31 + name.charCodeAt(i)) >>> 0;
		return 'hsl(' + (10 + h % 40) + ',' + (70 + h % 25) + '%,' + (55 + (h >> 8) % 15) + '%)';
	}

	class Flame {
		constructor(metric, format) {
			this.metric = metric;
			this.format = format;
			this.focus = [];	/* the path clicked, function names from the root */
			this.sig = '';
			this.box = el('div', { class: 'flame', dataset: { metric } });
			this.note = el('div', { class: 'count' });
			this.root = el('div', { class: 'flame-wrap' }, this.box, this.note);
		}

		update(vals) {
			const sig = [...vals].map(([k, v]) => k + '=' + v).sort().join('|') + '#' + this.focus.join(';');

			if (sig === this.sig)
				return;
			this.sig = sig;
			this.vals = vals;
			this.draw(tree(vals));
		}

		/* the node the focus names (as much of it as still exists) */
		focused(all) {
			let n = all;
			const path = [];

			for (const f of this.focus) {
				if (!n.kids.has(f))
					break;
				n = n.kids.get(f);
				path.push(f);
			}
			this.focus = path;
			return n;
		}

		draw(all) {
			const top = this.focused(all);
			const rows = this.focus.length + depth(top);
			const items = [];

			this.box.dataset.total = String(all.value);
			this.box.style.height = rows * ROW_PX + 'px';
			/* the root and the focused path, full width */
			[all, ...this.pathNodes(all)].forEach((n, d) =>
				items.push(this.frame(n, d, rows, 0, 100, all.value, d < this.focus.length)));
			this.place(top, this.focus.length, rows, 0, 100, all.value, items);
			this.box.replaceChildren(...items);
			this.note.textContent = all.value ? 'flame graph: ' + this.format(all.value) + ' in all' +
				(this.focus.length ? ', showing ' + this.focus[this.focus.length - 1] + ' (click the bottom bar for all)' : '') :
				'flame graph: no samples yet';
		}

		pathNodes(all) {
			const out = [];
			let n = all;

			for (const f of this.focus) {
				n = n.kids.get(f);
				out.push(n);
			}
			return out;
		}

		/* N's children above it, at depth D + 1, within [left, left + width) percent */
		place(n, d, rows, left, width, total, items) {
			let x = left;

			for (const k of [...n.kids.values()].sort((a, b) => a.name.localeCompare(b.name))) {
				const w = width * k.value / n.value;
				if (w >= MIN_PCT) {
					items.push(this.frame(k, d + 1, rows, x, w, total, false));
					this.place(k, d + 1, rows, x, w, total, items);
				}
				x += w;
			}
		}

		frame(n, d, rows, left, width, total, onPath) {
			const pct = total ? (100 * n.value / total).toFixed(1) : '0';
			const e = el('div', {
				class: 'frame' + (onPath ? ' path' : ''),
				title: n.name + ': ' + this.format(n.value) + ' (' + pct + '% of all)',
				style: 'left:' + left + '%;width:' + width + '%;top:' + (rows - 1 - d) * ROW_PX +
					'px;background:' + (d === 0 ? '#d9d9d9' : colour(n.name)),
				dataset: { frame: n.name, value: String(n.value), depth: String(d), path: n.path.join(';') },
			}, n.name);

			e.addEventListener('click', () => {
				this.focus = n.path;
				this.sig = '';
				this.update(this.vals);
			});
			return e;
		}
	}

	Stap.flame = { isStacks, func, tree, Flame };
})(window.Stap = window.Stap || {});
