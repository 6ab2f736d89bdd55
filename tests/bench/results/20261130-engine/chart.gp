set terminal pngcairo size 1280,720 font 'sans,10'
set termoption noenhanced
set output 'chart.png'
set grid ytics
set key inside top right vertical
set ylabel 'IOPS (median)'
set yrange [0:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -30 nomirror
set multiplot layout 1,2 title '4k IOPS by system and NBD connection count (rbdx-cN = N connections; median of rounds)'
$d0 << EOD
fio-rbd 7238
rbdx-c1-io_uring 4826
engine-c1 5705
qemu-nbd 4208
rbd-nbd-c1 5589
EOD
set title 'QD1'
plot $d0 using 2:xtic(1) title 'randread-4k-qd1'
$d1 << EOD
fio-rbd 38328 18668 18639
rbdx-c1-io_uring 21440 12326 12736
rbdx-c2-io_uring 24697 13207 12986
rbdx-c4-io_uring 20900 12169 9824
engine-c1 33196 15725 15452
engine-c2 34281 15436 14744
engine-c4 25558 13830 12129
qemu-nbd 7678 13847 13655
rbd-nbd-c1 30676 15435 15344
EOD
set title 'QD>1'
plot $d1 using 2:xtic(1) title 'randread-4k-qd32', $d1 using 3 title 'randwrite-4k-qd32', $d1 using 4 title 'randwrite-4k-qd32-layering'
unset multiplot
