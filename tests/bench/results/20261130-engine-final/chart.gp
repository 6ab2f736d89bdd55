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
fio-rbd 7204
rbdx-c1-io_uring 4809
engine-c1 5830
rbd-nbd-c1 5601
EOD
set title 'QD1'
plot $d0 using 2:xtic(1) title 'randread-4k-qd1'
$d1 << EOD
fio-rbd 42250 20387 19457
rbdx-c1-io_uring 23642 13421 10976
rbdx-c2-io_uring 27161 14936 13483
rbdx-c4-io_uring 21015 13167 11315
engine-c1 37738 17717 17649
engine-c2 34266 16314 16134
engine-c4 28246 12467 13340
rbd-nbd-c1 33302 15898 16581
EOD
set title 'QD>1'
plot $d1 using 2:xtic(1) title 'randread-4k-qd32', $d1 using 3 title 'randwrite-4k-qd32', $d1 using 4 title 'randwrite-4k-qd32-layering'
unset multiplot
